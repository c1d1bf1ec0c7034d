/**
 * pg_graphql parity for function arguments (sql_types.rs ArgsIterator / is_supported): a defaulted
 * argument is optional whatever its default; the default is shown only for int2/int4, bool,
 * float4/float8 and text literals; a default list that does not split at commas into one piece per
 * defaulted argument leaves them all required; overloading is judged by name across the search
 * path; nameless arguments and Supabase's system schemas leave a function out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';

let env: Env;
beforeAll(async () => {
  env = await setupEnv(`
    comment on schema public is '@graphql({"introspection": true})';
    create schema other;
    create schema if not exists extensions;
    create function defaults(a int, b int default 5, c bool default true, d float8 default 1.5,
      e text default 'hi', f bigint default 7, g date default current_date, h int default 2 + 3,
      i text default null)
      returns text stable language sql as $$ select concat_ws('|', a, b, c, d, e, f, g is not null, h, coalesce(i, '-')) $$;
    create function comma_default(a int, b text default 'x,y') returns text stable language sql as $$ select b $$;
    create function twice(a int) returns int stable language sql as $$ select a * 2 $$;
    create function other.twice(a text) returns text stable language sql as $$ select a || a $$;
    create function only_here(a int) returns int stable language sql as $$ select a $$;
    create function nameless(int) returns int stable language sql as $$ select $1 $$;
    create function extensions.ext_fn(a int) returns int stable language sql as $$ select a $$;
    create function __dunder(a int) returns int stable language sql as $$ select a $$;
    create function _single(a int) returns int stable language sql as $$ select a $$;
    set search_path to public, other, extensions;
  `);
});
afterAll(() => env?.close());

type Arg = { name: string; defaultValue: string | null; type: { kind: string; name: string | null } };
async function args(field: string): Promise<Arg[] | undefined> {
  const r = (await env.gql(
    '{ __type(name: "Query") { fields { name args { name defaultValue type { kind name } } } } }',
  )) as { data: { __type: { fields: { name: string; args: Arg[] }[] } } };
  return r.data.__type.fields.find((f) => f.name === field)?.args;
}

describe('function names', () => {
  it('one leading underscore is stripped, not more', async () => {
    expect(await args('_dunder')).toBeDefined();
    expect(await args('dunder')).toBeUndefined();
    expect(await args('single')).toBeDefined();
    expect(await env.gql('{ _dunder(a: 2) single(a: 3) }')).toEqual({ data: { _dunder: 2, single: 3 } });
  });
});

describe('function arguments', () => {
  it('a defaulted argument is optional; its default shows only for simple literals of pg_graphql types', async () => {
    const a = (await args('defaults')) ?? [];
    const by = Object.fromEntries(a.map((x) => [x.name, x]));
    expect(by.a?.type.kind).toBe('NON_NULL');
    for (const n of ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']) expect(by[n]?.type.kind).not.toBe('NON_NULL');
    expect(by.b?.defaultValue).toBe('5');
    expect(by.c?.defaultValue).toBe('true');
    expect(by.d?.defaultValue).toBe('1.5');
    expect(by.e?.defaultValue).toBe('"hi"');
    expect(by.f?.defaultValue).toBeNull(); // bigint: optional, default not shown
    expect(by.g?.defaultValue).toBeNull(); // an expression: optional, default not shown
    expect(by.h?.defaultValue).toBeNull();
    expect(by.i?.defaultValue).toBeNull();
  });

  it('omitted arguments take the SQL default', async () => {
    const r = (await env.gql('{ defaults(a: 1) }')) as { data: { defaults: string } };
    expect(r.data.defaults).toBe('1|5|t|1.5|hi|7|t|5|-');
    expect(await env.gql('{ defaults(a: 1, b: 9, e: "yo", i: "set") }')).toMatchObject({
      data: { defaults: expect.stringMatching(/^1\|9\|t\|1\.5\|yo\|7\|t\|5\|set$/) },
    });
  });

  it('a default list that does not split into one piece per default leaves the arguments required', async () => {
    const a = (await args('commaDefault')) ?? (await args('comma_default'));
    expect(a?.find((x) => x.name === 'b')?.type.kind).toBe('NON_NULL');
  });

  it('overloading is judged by name across the search path; nameless arguments and system schemas leave a function out', async () => {
    expect(await args('twice')).toBeUndefined();
    expect(await args('only_here')).toBeDefined();
    expect(await args('nameless')).toBeUndefined();
    expect(await args('ext_fn')).toBeUndefined();
  });
});
