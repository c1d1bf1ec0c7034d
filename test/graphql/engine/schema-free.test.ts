/** `{ __typename }` on the pool path: answered from the cache with no round trip (its answer never depends on the schema). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { setupEnv, type Env } from './harness.js';
import { countingPool } from './wire-tap.js';
import { resolveWithPool, resolveWithPoolText } from '../../../src/graphql/engine.js';

let env: Env;
let pool: pg.Pool;
let roundTrips = 0;

beforeAll(async () => {
  env = await setupEnv(`
    create table item (id serial primary key, name text);
    grant select on item to anon;
  `);
  pool = countingPool(env.db.url, () => {
    roundTrips++;
  });
});
afterAll(async () => {
  await pool.end();
  await env.close();
});

const anon = { role: 'anon', claims: { role: 'anon' } };

describe('schema-free answers', () => {
  it('{ __typename } costs no round trip once the schema is cached, before and after DDL', async () => {
    const req = { query: '{ __typename t: __typename }' };
    expect(await resolveWithPool(pool, anon, req)).toEqual({ data: { __typename: 'Query', t: 'Query' } });
    roundTrips = 0;
    expect(await resolveWithPoolText(pool, anon, req)).toBe('{"data":{"__typename":"Query","t":"Query"}}');
    expect(roundTrips).toBe(0);
    await env.client.query('alter table item add column note text');
    expect(await resolveWithPoolText(pool, anon, req)).toBe('{"data":{"__typename":"Query","t":"Query"}}');
  });
  it('anything a schema could change still checks the version first', async () => {
    await resolveWithPool(pool, anon, { query: '{ itemCollection { totalCount } }' });
    for (const query of [
      '{ __typename ... on Query { __typename } }',
      'query Q($a: Int) { __typename }',
      '{ __typename nope }',
      '{ __typename @skip(if: false) }',
      'mutation { __typename }',
    ]) {
      roundTrips = 0;
      await resolveWithPool(pool, anon, { query });
      expect(roundTrips, query).toBeGreaterThan(0);
    }
  });
});
