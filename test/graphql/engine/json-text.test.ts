/**
 * The HTTP path's response text: statements' JSON kept as PostgreSQL's text (not parsed, not
 * reprinted), standing for the same value as the parsed response (resolveWithPool's object).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { setupEnv, type Env } from './harness.js';
import { resolveWithPool, resolveWithPoolText } from '../../../src/graphql/engine.js';

let env: Env;
let pool: pg.Pool;

beforeAll(async () => {
  env = await setupEnv(`
    create table reading (
      id serial primary key, label text, f8 float8, f4 float4, n numeric, big bigint, doc jsonb, j json, ok boolean
    );
    insert into reading (label, f8, f4, n, big, doc, j, ok) values
      (E'tab\\there "quoted" back\\\\slash \\u0001 é 😀', 1e20, 1.5, 1.50, 9007199254740993, '{"b": [1, 2.50], "a": null}', '{"x" : 1}', true),
      ('small', 1.5e-7, 0.1, -0.0, -1, '"s"', '[1, 2]', false),
      ('edge', -0, 3.4e38, 1e30, 0, '[]', 'null', null),
      ('big', 1e15, -1e-5, 0.000001, 42, '{}', '{}', true);
    grant select on reading to anon;
    comment on schema public is '@graphql({"inflect_names": true})';
  `);
  pool = new pg.Pool({ connectionString: env.db.url, max: 2 });
});
afterAll(async () => {
  await pool.end();
  await env.close();
});

const anon = { role: 'anon', claims: { role: 'anon' } };

describe('resolveWithPoolText', () => {
  const requests = [
    {
      query:
        '{ readingCollection(orderBy: [{id: AscNullsLast}]) { edges { node { id label f8 f4 n big doc j ok } } } }',
    },
    { query: '{ __typename a: readingCollection(first: 1) { totalCount: __typename edges { cursor } } }' },
    { query: '{ readingCollection { edges { node { nope } } } }' },
    { query: '{ readingCollection(first: 1) { edges { node { id } } } __type(name: "Reading") { name } }' },
    {
      query:
        'query Q($l: String) { readingCollection(filter: {label: {eq: $l}}) { edges { node { label f8 } } } }',
      variables: { l: 'small' },
    },
    { query: '{ readingCollection(first: -1) { edges { node { id } } } }' },
    { query: 'query { x' },
  ];
  it('stands for the value resolveWithPool gives, for data, errors and introspection', async () => {
    for (const req of requests) {
      const text = await resolveWithPoolText(pool, anon, req);
      expect(JSON.parse(text)).toEqual(await resolveWithPool(pool, anon, req));
    }
  });

  it("writes the statements' JSON as PostgreSQL wrote it: its spacing and numerals, strings escaped", async () => {
    const first = await resolveWithPoolText(pool, anon, requests[0] as { query: string });
    expect(first.startsWith('{"data":{"readingCollection":{"edges" : [{"node" : {"id" : 1, "label" : ')).toBe(
      true,
    );
    expect(first).toContain('"f8" : 1e+20, "f4" : 1.5, "n" : "1.50", "big" : "9007199254740993"');
    expect(first).toContain('"f8" : 1.5e-07');
    expect(first).toContain('"label" : "tab\\there \\"quoted\\" back\\\\slash \\u0001 é 😀"');
    const back = JSON.parse(first) as {
      data: { readingCollection: { edges: { node: { label: string } }[] } };
    };
    expect(back.data.readingCollection.edges[0]?.node.label).toBe(
      'tab\there "quoted" back\\slash \u0001 é 😀',
    );
  });
});
