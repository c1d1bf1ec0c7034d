/** resolveWithPool: one round trip per request, role + claims, and schema changes picked up through the version guard. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { setupEnv, type Env } from './harness.js';
import { countingPool } from './wire-tap.js';
import { resolveWithPool } from '../../../src/graphql/engine.js';

let env: Env;
let pool: pg.Pool;
let roundTrips = 0;

beforeAll(async () => {
  env = await setupEnv(`
    create table item (id serial primary key, name text not null, owner text);
    insert into item (name, owner) values ('one', 'u1'), ('two', 'u2');
    alter table item enable row level security;
    create policy mine on item for all using (owner = current_setting('request.jwt.claims', true)::jsonb ->> 'sub');
    grant select, insert, update, delete on item to authenticated;
    grant usage on sequence item_id_seq to authenticated;
    comment on schema public is '@graphql({"inflect_names": true})';
  `);
  pool = countingPool(env.db.url, () => {
    roundTrips++;
  });
});
afterAll(async () => {
  await pool.end();
  await env.close();
});

const u1 = { role: 'authenticated', claims: { sub: 'u1', role: 'authenticated' } };
const list = { query: '{ itemCollection { edges { node { name } } } }' };

describe('resolveWithPool', () => {
  it('runs as the principal (RLS sees the claims)', async () => {
    expect(await resolveWithPool(pool, u1, list)).toEqual({
      data: { itemCollection: { edges: [{ node: { name: 'one' } }] } },
    });
    expect(await resolveWithPool(pool, { role: 'authenticated', claims: { sub: 'u2' } }, list)).toEqual({
      data: { itemCollection: { edges: [{ node: { name: 'two' } }] } },
    });
  });
  it('costs one round trip per request once the schema is cached', async () => {
    await resolveWithPool(pool, u1, list);
    roundTrips = 0;
    await resolveWithPool(pool, u1, list);
    await resolveWithPool(pool, u1, {
      query: 'query Q($n: String) { itemCollection(filter: {name: {eq: $n}}) { edges { node { name } } } }',
      variables: { n: 'one' },
    });
    expect(roundTrips).toBe(2);
  });
  it('picks up DDL on the next request (version guard, rebuild, retry)', async () => {
    await resolveWithPool(pool, u1, list);
    await env.client.query('alter table item add column note text');
    const res = await resolveWithPool(pool, u1, {
      query: '{ itemCollection { edges { node { name note } } } }',
    });
    expect(res).toEqual({ data: { itemCollection: { edges: [{ node: { name: 'one', note: null } }] } } });
  });
  it('sees GRANT/REVOKE on the next request', async () => {
    await env.client.query(
      'revoke select on item from authenticated; grant select (id, name, owner) on item to authenticated',
    );
    const res = await resolveWithPool(pool, u1, {
      query: '{ itemCollection { edges { node { name note } } } }',
    });
    expect(res).toEqual({ data: null, errors: [{ message: "Unknown field 'note' on type 'Item'" }] });
    await env.client.query('grant select on item to authenticated');
    expect(
      await resolveWithPool(pool, u1, { query: '{ itemCollection { edges { node { note } } } }' }),
    ).toEqual({ data: { itemCollection: { edges: [{ node: { note: null } }] } } });
  });
  it('runs mutations in one transaction and returns SQL errors as GraphQL errors', async () => {
    const res = await resolveWithPool(pool, u1, {
      query: `mutation { a: insertIntoItemCollection(objects: [{name: "three", owner: "u1"}]) { affectedCount } b: insertIntoItemCollection(objects: [{name: null, owner: "u1"}]) { affectedCount } }`,
    });
    expect(res.data).toBeNull();
    expect((res.errors as { message: string }[])[0]!.message).toMatch(/null value in column "name"/);
    expect(await resolveWithPool(pool, u1, list)).toEqual({
      data: { itemCollection: { edges: [{ node: { name: 'one' } }] } },
    });
  });
});
