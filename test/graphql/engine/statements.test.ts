/** One SQL statement per top-level field, counted on the wire (Query and Parse messages sent to PostgreSQL). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';

let env: Env;
let sent: string[] = [];

/** Records the SQL text of every simple-query ('Q') and parse ('P') message written to the socket. */
function tap(client: Env['client']) {
  const stream = (client as unknown as { connection: { stream: { write: (...a: unknown[]) => boolean } } })
    .connection.stream;
  const write = stream.write.bind(stream);
  stream.write = (chunk: unknown, ...rest: unknown[]) => {
    if (Buffer.isBuffer(chunk)) {
      let i = 0;
      while (i + 5 <= chunk.length) {
        const type = String.fromCharCode(chunk[i]!);
        const len = chunk.readInt32BE(i + 1);
        const body = chunk.subarray(i + 5, i + 1 + len);
        if (type === 'Q') sent.push(body.toString('utf8').replace(/\0$/, ''));
        if (type === 'P') {
          const nameEnd = body.indexOf(0);
          sent.push(body.subarray(nameEnd + 1, body.indexOf(0, nameEnd + 1)).toString('utf8'));
        }
        i += 1 + len;
      }
    }
    return write(chunk, ...rest);
  };
}

/** Splits a simple-query message into its statements (on semicolons outside quotes). */
function statementsOf(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quote: string | null = null;
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === ';') {
      out.push(cur.trim());
      cur = '';
      continue;
    }
    cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/** Statements of the request itself (not transaction control, not the per-request version check). */
const work = () =>
  sent
    .flatMap(statementsOf)
    .filter(
      (s) =>
        !/^\s*(savepoint|release|begin|commit|rollback)\b/i.test(s) &&
        !s.includes('current_schemas(false)::text as search_path'),
    );

beforeAll(async () => {
  env = await setupEnv();
  tap(env.client);
});
afterAll(() => env.close());

const NESTED = `{ accountCollection { edges { node { email blogCollection { edges { node { name postCollection { edges { node { title } } } } } } } } } }`;

describe('statements per request', () => {
  it('a three-level nested query is one statement', async () => {
    await env.gql(NESTED); // warm the catalog cache
    sent = [];
    const res = (await env.gql(NESTED)) as {
      data: { accountCollection: { edges: { node: { blogCollection: { edges: unknown[] } } }[] } };
    };
    expect(res.data.accountCollection.edges[0]!.node.blogCollection.edges).toHaveLength(2);
    expect(work()).toHaveLength(1);
    expect(sent).toHaveLength(2); // the version check, then the statement
  });
  it('two top-level fields are two statements; introspection and __typename are none', async () => {
    sent = [];
    await env.gql(
      `{ a: accountCollection { edges { node { id } } } b: blogCollection { edges { node { owner { email } } } } __typename __type(name: "Blog") { name } }`,
    );
    expect(work()).toHaveLength(2);
  });
  it('a mutation with two fields is two statements in one transaction', async () => {
    await env.client.query('begin');
    try {
      sent = [];
      await env.gql(`mutation { a: bump(amount: 1) b: bump(amount: 2) }`);
      expect(work()).toHaveLength(2);
    } finally {
      await env.client.query('rollback');
    }
  });
});
