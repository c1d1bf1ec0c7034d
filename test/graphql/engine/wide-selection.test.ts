/**
 * 20,000 aliases reach the engine (the HTTP layer's width limit off, or an embedder calling it):
 * every shape gets its answer — `__typename` at the root (no SQL), one column under a collection
 * (one object of 20,000 keys, built as jsonb chunks merged pairwise), and more than one chunk of
 * distinct fields (values and keys in place). Times are printed, not asserted
 * (benchmarks/graphql/wide-query.mjs measures them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { setupEnv, type Env } from './harness.js';
import { resolveWithPoolText } from '../../../src/graphql/engine.js';

let env: Env;
let pool: pg.Pool;

const COLUMNS = 120;

beforeAll(async () => {
  const cols = Array.from({ length: COLUMNS }, (_, i) => `c${i} int not null default ${i}`).join(', ');
  env = await setupEnv(`
    create table item (id serial primary key, ${cols});
    insert into item default values;
    grant select on item to anon;
  `);
  pool = new pg.Pool({ connectionString: env.db.url, max: 2 });
});
afterAll(async () => {
  await pool.end();
  await env.close();
});

const anon = { role: 'anon', claims: { role: 'anon' } };
const N = 20_000;
const aliases = (field: string) => Array.from({ length: N }, (_, i) => `a${i}: ${field}`).join(' ');

async function timed(query: string): Promise<Record<string, unknown>> {
  const started = performance.now();
  const text = await resolveWithPoolText(pool, anon, { query });
  console.log(`${query.slice(0, 40)}…: answered in ${(performance.now() - started).toFixed(0)} ms`);
  return JSON.parse(text);
}

describe('20,000 aliases through the engine', () => {
  it('of __typename at the root: answered', async () => {
    const r = await timed(`{ ${aliases('__typename')} }`);
    const data = r.data as Record<string, string>;
    expect(r.errors).toBeUndefined();
    expect(Object.keys(data)).toHaveLength(N);
    expect(data.a0).toBe('Query');
    expect(data[`a${N - 1}`]).toBe('Query');
  });

  it('of one column under a collection: answered with every key', { timeout: 60_000 }, async () => {
    const r = await timed(`{ itemCollection { edges { node { ${aliases('id')} } } } }`);
    expect(r.errors).toBeUndefined();
    const node = (r.data as { itemCollection: { edges: { node: Record<string, number> }[] } }).itemCollection
      .edges[0]?.node as Record<string, number>;
    expect(Object.keys(node)).toHaveLength(N);
    expect(node.a0).toBe(1);
    expect(node[`a${N - 1}`]).toBe(1);
  });

  it('more fields than one chunk: each key keeps its own value', async () => {
    const fields = Array.from({ length: COLUMNS }, (_, i) => `x${i}: c${i}`).join(' ');
    const r = await timed(`{ itemCollection { edges { node { id ${fields} } } } }`);
    const node = (r.data as { itemCollection: { edges: { node: Record<string, number> }[] } }).itemCollection
      .edges[0]?.node as Record<string, number>;
    expect(node.id).toBe(1);
    for (let i = 0; i < COLUMNS; i++) expect(node[`x${i}`]).toBe(i);
  });
});
