/** One SQL statement per top-level field, counted on the wire (Query and Parse messages sent to PostgreSQL). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';
import { tap, work } from './wire-tap.js';

let env: Env;
const sent: string[] = [];

beforeAll(async () => {
  env = await setupEnv();
  tap(env.client, sent);
});
afterAll(() => env.close());

const NESTED = `{ accountCollection { edges { node { email blogCollection { edges { node { name postCollection { edges { node { title } } } } } } } } } }`;

describe('statements per request', () => {
  it('a three-level nested query is one statement', async () => {
    await env.gql(NESTED); // warm the catalog cache
    sent.length = 0;
    const res = (await env.gql(NESTED)) as {
      data: { accountCollection: { edges: { node: { blogCollection: { edges: unknown[] } } }[] } };
    };
    expect(res.data.accountCollection.edges[0]!.node.blogCollection.edges).toHaveLength(2);
    expect(work(sent)).toHaveLength(1);
    expect(sent).toHaveLength(2); // the version check, then the statement
  });
  it('two top-level fields are two statements; introspection and __typename are none', async () => {
    sent.length = 0;
    await env.gql(
      `{ a: accountCollection { edges { node { id } } } b: blogCollection { edges { node { owner { email } } } } __typename __type(name: "Blog") { name } }`,
    );
    expect(work(sent)).toHaveLength(2);
  });
  it('a mutation with two fields is two statements in one transaction', async () => {
    await env.client.query('begin');
    try {
      sent.length = 0;
      await env.gql(`mutation { a: bump(amount: 1) b: bump(amount: 2) }`);
      expect(work(sent)).toHaveLength(2);
    } finally {
      await env.client.query('rollback');
    }
  });
});
