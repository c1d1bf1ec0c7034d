/**
 * Every pooled connection of a project held for longer than the checkout wait: requests are shed
 * with 503 + Retry-After and a message that says the database is busy (not "unavailable": it
 * answers fine), in each API's error shape; once connections come back, requests are answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { DATABASE_BUSY_MESSAGE } from '../../src/db/connection-errors.js';
import { startGraphQLPlatform, type GraphQLPlatform } from './graphql-platform.js';

let gp: GraphQLPlatform;

beforeAll(async () => {
  gp = await startGraphQLPlatform({ dbConnectTimeoutMs: 300 });
});
afterAll(async () => {
  await gp?.close();
});

/** Lends out every client of the project's pool until `release` is called. */
async function holdPool(): Promise<() => void> {
  const pool = gp.project.pool;
  const held: pg.PoolClient[] = [];
  for (let i = 0; i < pool.options.max; i++) held.push(await pool.connect());
  return () => {
    for (const c of held) c.release();
  };
}

describe('a saturated project pool', () => {
  it('sheds GraphQL and Storage requests with 503 "busy", then answers again', async () => {
    const release = await holdPool();
    try {
      const graphql = await fetch(gp.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', apikey: gp.project.anonKey },
        body: JSON.stringify({ query: '{ accountCollection { totalCount } }' }),
      });
      expect(graphql.status).toBe(503);
      expect(graphql.headers.get('retry-after')).toBe('1');
      const body = await graphql.json();
      expect(body.errors[0].message).toBe(DATABASE_BUSY_MESSAGE);

      const storage = await fetch(`${gp.tp.url}/storage/v1/bucket`, {
        headers: { authorization: `Bearer ${gp.project.serviceRoleKey}`, apikey: gp.project.anonKey },
      });
      expect(storage.status).toBe(503);
      expect((await storage.json()).message).toBe(DATABASE_BUSY_MESSAGE);
    } finally {
      release();
    }
    expect(await gp.post({ query: '{ accountCollection { totalCount } }' })).toEqual({
      status: 200,
      json: { data: { accountCollection: { totalCount: 2 } } },
    });
  });
});
