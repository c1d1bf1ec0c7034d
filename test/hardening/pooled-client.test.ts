/**
 * withPooledClient is the only way the code borrows a pooled client, and it always gives it back:
 * idle after an error inside a transaction, destroyed when the connection cannot be reset or was
 * marked unusable, and nothing of the work can keep it. poolStats reads the pool's counters.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discardClient, poolStats, withPooledClient } from '../../src/db/pooled-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'pooled', bootstrap: false });
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  pool.on('error', () => {});
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe('withPooledClient', () => {
  it('gives the client back whatever the work throws, more times than the pool has clients', async () => {
    for (let i = 0; i < 10; i++) {
      await expect(
        withPooledClient(pool, async () => {
          throw new Error(`work ${i} failed before any query`);
        }),
      ).rejects.toThrow(`work ${i} failed`);
    }
    expect(poolStats(pool).checkedOut).toBe(0);
  });

  it('rolls back a transaction left open by an error or by a forgotten commit', async () => {
    await pool.query('create table if not exists t (v int)');
    await expect(
      withPooledClient(pool, async (c) => {
        await c.query('begin; insert into t values (1)');
        await c.query('select 1/0');
      }),
    ).rejects.toThrow('division by zero');
    await withPooledClient(pool, async (c) => {
      await c.query('begin; insert into t values (2)');
    });
    expect(poolStats(pool).checkedOut).toBe(0);
    expect((await pool.query('select count(*)::int as n from t')).rows[0].n).toBe(0);
    // The clients went back idle, not in a transaction.
    for (let i = 0; i < 2; i++)
      await withPooledClient(pool, async (c) => expect(c.getTransactionStatus()).toBe('I'));
  });

  it('destroys a client whose connection died, and one marked unusable', async () => {
    const before = poolStats(pool).total;
    await expect(
      withPooledClient(pool, async (c) => {
        await c.query('begin');
        await c.query('select pg_terminate_backend(pg_backend_pid())');
      }),
    ).rejects.toThrow();
    expect(poolStats(pool).total).toBeLessThan(before + 1);
    await withPooledClient(pool, async (c) => {
      (c as unknown as { marker: boolean }).marker = true;
      discardClient(c, new Error('state unknown'));
    });
    // Neither comes back: every client handed out now is a fresh, working one.
    for (let i = 0; i < 3; i++)
      await withPooledClient(pool, async (c) => {
        expect((c as unknown as { marker?: boolean }).marker).toBeUndefined();
        expect((await c.query('select 1 as x')).rows[0].x).toBe(1);
      });
    expect(poolStats(pool)).toMatchObject({ checkedOut: 0, waiting: 0 });
  });

  it('is the only place in src/ that borrows a client from a pool', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (p.endsWith('.ts') && !p.endsWith(join('db', 'pooled-client.ts'))) {
          const text = readFileSync(p, 'utf8');
          if (
            /\b(pool|Pool)\s*\.\s*connect\s*\(/.test(text) ||
            /\b\w*[cC]lient\??\.\s*release\s*\(/.test(text)
          )
            offenders.push(p);
        }
      }
    };
    walk(join(import.meta.dirname, '../../src'));
    expect(offenders).toEqual([]);
  });
});
