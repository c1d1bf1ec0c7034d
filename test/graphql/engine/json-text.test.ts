/**
 * The HTTP path's response text: statements' JSON kept as PostgreSQL's text and compacted, with
 * the same bytes as JSON.stringify of the parsed response (resolveWithPool's object).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { setupEnv, type Env } from './harness.js';
import { resolveWithPool, resolveWithPoolText } from '../../../src/graphql/engine.js';
import { compactJson } from '../../../src/graphql/execute/json-text.js';

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

describe('compactJson', () => {
  it('is JSON.stringify(JSON.parse(text)) for the JSON text PostgreSQL writes', async () => {
    const { rows } = await env.client.query<{ t: string }>(`
      select x::text as t from (values
        (to_json(1e20::float8)), (to_json(1.5e-7::float8)), (to_json('-0'::float8)), (to_json(1e15::float8)),
        (to_json(123.456::float8)), (to_json(0.1::float4)), (to_json(12345678901234567890::numeric)),
        (to_json(1.50::numeric)), (to_json(-0.0::numeric)), (to_json(1e-10::numeric)), (to_json(E'a\\tb\\n"c"\\\\ \\u0001\\u001f é 😀'::text)),
        (json_build_object('a', 1, 'b', json_build_array(true, false, null, '', 'x y'), 'c', '{}'::json)),
        ((select json_agg(json_build_object('k', g, 'v', g * 0.5)) from generate_series(1, 5) g)),
        (('{"b": [1, 2.50, {"c": "d e"}], "a": null, "s": "\\\\\\""}'::jsonb)::json),
        ('[]'::json), ('"\\\\"'::json), ('  {  }  '::json)
      ) v(x)`);
    for (const { t } of rows) expect(compactJson(t)).toBe(JSON.stringify(JSON.parse(t)));
  });

  it('holds for numbers that print longer than they are written, many of them, beside multi-byte text', async () => {
    const { rows } = await env.client.query<{ t: string }>(`
      select json_build_object('xs', (select json_agg(json_build_array(1e20::float8, 1e5::float8, 'é😀 "q" \\', 5e-324::float8, 1.5e300::float8))
        from generate_series(1, 200)), 'raw', '{"a" :  1E5, "b": [ -0, 0.10, 12345678901234567890 ] }'::json)::text as t`);
    for (const { t } of rows) expect(compactJson(t)).toBe(JSON.stringify(JSON.parse(t)));
  });
});

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
  it('gives the bytes of JSON.stringify(resolveWithPool(...)) for data, errors and introspection', async () => {
    for (const req of requests) {
      const text = await resolveWithPoolText(pool, anon, req);
      expect(text).toBe(JSON.stringify(await resolveWithPool(pool, anon, req)));
    }
    const first = await resolveWithPoolText(pool, anon, requests[0]);
    expect(first).toContain('"f8":100000000000000000000,"f4":1.5,"n":"1.50","big":"9007199254740993"');
    expect(first).toContain('"f8":1.5e-7');
  });
});
