/**
 * Platform.createProject: a project database is bootstrapped once at creation, and a creation that
 * fails (in the bootstrap, or when the registry row is written) leaves no project row, no database
 * and no project login behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { withClient, withDatabase } from '../../src/db/pool.js';
import { newProjectRef } from '../../src/platform/refs.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { serverUrl } from '../support/database.js';

// The ref of the next project, when a test needs to know it before creation fails.
const refs = { next: undefined as string | undefined };

let tp: TestPlatform;
/** Databases the bootstrap hook ran on, in order; `failOn` makes it throw on that database. */
const bootstrapped: string[] = [];
let failOn = '';

async function recordingHook(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ db: string }>('select current_database() as db');
  const db = rows[0]?.db ?? '';
  bootstrapped.push(db);
  if (db === failOn) throw new Error('bootstrap hook failed on purpose');
}

beforeAll(async () => {
  tp = await startTestPlatform(
    {},
    { projectBootstrapHooks: [recordingHook], newProjectRef: () => refs.next ?? newProjectRef() },
  );
});
afterAll(async () => {
  await tp?.close();
});

async function databaseExists(name: string): Promise<boolean> {
  return withClient(withDatabase(serverUrl(), 'postgres'), async (c) => {
    const { rowCount } = await c.query('select 1 from pg_database where datname = $1', [name]);
    return rowCount === 1;
  });
}

async function projectRows(name: string): Promise<number> {
  const { rows } = await tp.platform.pool.query<{ n: number }>(
    'select count(*)::int as n from projects where name = $1',
    [name],
  );
  return rows[0]?.n ?? -1;
}

/** A fresh ref (20 lowercase letters) for the next project. */
function nextRef(): string {
  refs.next = Array.from(randomBytes(20), (b) => String.fromCharCode(97 + (b % 26))).join('');
  return refs.next;
}

async function loginsOf(ref: string): Promise<string[]> {
  const { rows } = await tp.platform.pool.query<{ rolname: string }>(
    'select rolname from pg_roles where rolname = any($1) order by rolname',
    [[`postgres.${ref}`, `strata_sql.${ref}`]],
  );
  return rows.map((r) => r.rolname);
}

describe('creating a project', () => {
  it('bootstraps its database once and caches it as loaded', async () => {
    const dbName = `p_${randomBytes(10).toString('hex')}`;
    const before = bootstrapped.length;
    const ctx = await tp.platform.createProject({ name: 'once', organizationId: 'default-org', dbName });
    expect(bootstrapped.slice(before)).toEqual([dbName]);
    expect(await tp.platform.project(ctx.ref)).toBe(ctx);
    expect(bootstrapped.slice(before)).toEqual([dbName]);
    // A new process (here: a dropped cache) bootstraps it again on first use.
    await tp.platform.forget(ctx.ref);
    await tp.platform.project(ctx.ref);
    expect(bootstrapped.slice(before)).toEqual([dbName, dbName]);
  });

  it('leaves no row, database or login when the bootstrap fails', async () => {
    const dbName = `p_${randomBytes(10).toString('hex')}`;
    failOn = dbName;
    const ref = nextRef();
    await expect(
      tp.platform.createProject({ name: 'failing-bootstrap', organizationId: 'default-org', dbName }),
    ).rejects.toThrow(/bootstrap hook failed on purpose/);
    failOn = '';
    refs.next = undefined;
    expect(await projectRows('failing-bootstrap')).toBe(0);
    expect(await databaseExists(dbName)).toBe(false);
    expect(await loginsOf(ref)).toEqual([]);
  });

  it('leaves no row, database or login when the registry row cannot be written', async () => {
    const dbName = `p_${randomBytes(10).toString('hex')}`;
    const ref = nextRef();
    // No such organization: the foreign key refuses the row after the database was bootstrapped.
    await expect(
      tp.platform.createProject({ name: 'failing-row', organizationId: 'no-such-org', dbName }),
    ).rejects.toThrow(/foreign key/);
    refs.next = undefined;
    expect(bootstrapped).toContain(dbName);
    expect(await projectRows('failing-row')).toBe(0);
    expect(await databaseExists(dbName)).toBe(false);
    expect(await loginsOf(ref)).toEqual([]);
  });
});
