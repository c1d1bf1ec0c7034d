import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createTestDatabase, connect, type TestDatabase } from '../support/database.js';
import { createPool } from '../../src/db/pool.js';
import { queryAs, withRole } from '../../src/db/with-role.js';

let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  const c = await connect(db.url);
  await c.query(`
    create table notes (id serial primary key, owner uuid, body text);
    alter table notes enable row level security;
    create policy own_notes on notes for select to authenticated using (owner = auth.uid());
    insert into notes (owner, body) values
      ('11111111-1111-1111-1111-111111111111', 'alice'),
      ('22222222-2222-2222-2222-222222222222', 'bob');`);
  await c.end();
  pool = createPool(db.apiUrl);
});

afterAll(async () => {
  await pool.end();
  await db.drop();
});

describe('role switching per request', () => {
  it('anon sees nothing under RLS without a policy for it', async () => {
    const rows = await queryAs(
      pool,
      { role: 'anon', claims: { role: 'anon' } },
      'select body from notes order by id',
    );
    expect(rows).toEqual([]);
  });

  it('service_role bypasses RLS and sees everything', async () => {
    const rows = await queryAs(
      pool,
      { role: 'service_role', claims: { role: 'service_role' } },
      'select body from notes order by id',
    );
    expect(rows.map((r) => r.body)).toEqual(['alice', 'bob']);
  });

  it('authenticated sees its own rows through auth.uid() from the claims', async () => {
    const principal = {
      role: 'authenticated',
      claims: { role: 'authenticated', sub: '22222222-2222-2222-2222-222222222222' },
    };
    const rows = await withRole(
      pool,
      principal,
      async (c) =>
        (await c.query('select body, auth.role() as r, auth.jwt() ->> $1 as sub from notes', ['sub'])).rows,
    );
    expect(rows).toEqual([{ body: 'bob', r: 'authenticated', sub: '22222222-2222-2222-2222-222222222222' }]);
  });

  it('the role and claims do not leak to the next request on the same connection', async () => {
    const p = createPool(db.apiUrl, { max: 1 });
    await queryAs(p, { role: 'service_role', claims: { role: 'service_role', sub: 'x' } }, 'select 1');
    const rows = await p.query(
      `select current_user as u, coalesce(current_setting('request.jwt.claims', true), '') as c`,
    );
    expect(rows.rows[0]).toEqual({ u: 'authenticator', c: '' });
    await p.end();
  });

  it('a failing statement rolls back and leaves the connection usable', async () => {
    const p = createPool(db.apiUrl, { max: 1 });
    await expect(queryAs(p, { role: 'service_role', claims: {} }, 'select 1/0')).rejects.toThrow(
      /division by zero/,
    );
    await expect(
      withRole(p, { role: 'service_role', claims: {} }, async (c) => {
        await c.query(`insert into notes (body) values ('lost')`);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const rows = await queryAs(
      p,
      { role: 'service_role', claims: {} },
      `select count(*)::int as n from notes where body = 'lost'`,
    );
    expect(rows[0]!.n).toBe(0);
    await p.end();
  });

  it('role, claims and query travel in one round trip', async () => {
    // Count protocol messages: node-postgres sends one Query message per client.query call.
    const p = createPool(db.apiUrl, { max: 1 });
    const client = await p.connect();
    let sent = 0;
    const conn = (client as unknown as { connection: { query: (t: string) => void } }).connection;
    const orig = conn.query.bind(conn);
    conn.query = (t: string) => {
      sent++;
      orig(t);
    };
    client.release();
    await queryAs(p, { role: 'anon', claims: { role: 'anon' } }, 'select 1');
    expect(sent).toBe(1);
    await p.end();
  });
});
