/**
 * The refresh's check (realtime/snapshot-check.ts): the schema version and whether a snapshot sees
 * given transactions, asked through a statement the connection keeps prepared; on a connection
 * whose prepared statement went away, and on a pool that keeps no session state.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopPreparing } from '../../src/graphql/engine.js';
import { checkNow, sees, type Snapshot } from '../../src/realtime/snapshot-check.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'snapcheck' });
});
afterAll(async () => {
  await db?.drop();
});

/** A pool of one connection, so every call meets the same session. */
async function withOnePool<T>(work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: db.apiUrl, max: 1 });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

const prepared = async (pool: pg.Pool) =>
  (await pool.query<{ n: number }>('select count(*)::int as n from pg_prepared_statements')).rows[0]?.n;

/** A committed transaction's id (32 bits, as test_decoding prints it). */
async function committedXid(): Promise<number> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const { rows } = await c.query<{ x: string }>(
      'select (pg_current_xact_id()::text::int8 % 4294967296)::text as x',
    );
    return Number(rows[0]?.x);
  } finally {
    await c.end();
  }
}

describe('refresh check', () => {
  it('answers the version and what a snapshot sees, from one statement prepared on the connection', async () => {
    const xid = await committedXid();
    await withOnePool(async (pool) => {
      const first = await checkNow(pool, []);
      expect(first.seen).toBe(true);
      expect(Number.isInteger(first.version)).toBe(true);
      expect(await prepared(pool)).toBe(1);
      const again = await checkNow(pool, [xid]);
      expect(again).toMatchObject({ version: first.version, seen: true });
      // Its snapshot sees the committed transaction, not one not yet begun.
      const snapshot = again.snapshot as Snapshot;
      expect(snapshot.xmax > 0n).toBe(true);
      expect([sees(snapshot, xid), sees(snapshot, xid + 1000)]).toEqual([true, false]);
      // A transaction not yet begun is not seen.
      expect((await checkNow(pool, [xid + 1000])).seen).toBe(false);
      // Still the one statement.
      expect(await prepared(pool)).toBe(1);
    });
  });

  it('prepares again on a connection whose statement was deallocated', async () => {
    await withOnePool(async (pool) => {
      const first = await checkNow(pool, []);
      await pool.query('deallocate all');
      // (The snapshot moves with other sessions' transactions.)
      const again = await checkNow(pool, []);
      expect(again).toMatchObject({ version: first.version, seen: first.seen });
      expect(again.snapshot).toBeDefined();
    });
  });

  it('inlines the check on a pool that keeps no session state', async () => {
    await withOnePool(async (pool) => {
      stopPreparing(pool);
      const answer = await checkNow(pool, []);
      expect(answer.seen).toBe(true);
      expect(Number.isInteger(answer.version)).toBe(true);
      expect(await prepared(pool)).toBe(0);
    });
  });

  it('refuses ids that are not integers without asking', async () => {
    await withOnePool(async (pool) => {
      expect(await checkNow(pool, [1.5])).toEqual({ seen: false });
      expect(await prepared(pool)).toBe(0);
    });
  });
});
