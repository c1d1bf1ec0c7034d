/**
 * pg_graphql parity for variadic functions and argument modes (issue 13, class 4). pg_graphql
 * (sql_types.rs Function / ArgsIterator, sql/load_sql_context.sql) has no rule for either: a
 * function's arguments are `proargtypes` — its IN, INOUT and VARIADIC arguments, a variadic one as
 * its array type, so a list in GraphQL — each named by its position in `proargnames`. It calls a
 * function with named arguments, which PostgreSQL does not match to a variadic parameter (it wants
 * `VARIADIC name => …`, and finds no candidate once any argument is named): a call fails with
 * PostgreSQL's own message, as it does in pg_graphql.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';

let env: Env;
beforeAll(async () => {
  env = await setupEnv(`
    comment on schema public is '@graphql({"introspection": true})';
    create function total(variadic nums int[]) returns int stable language sql
      as $$ select coalesce(sum(n), 0)::int from unnest(nums) n $$;
    create function joined(sep text, variadic parts text[] default '{}') returns text stable language sql
      as $$ select array_to_string(parts, sep) $$;
    create function nameless_variadic(variadic int[]) returns int stable language sql as $$ select 1 $$;
    create function doubled(inout n int) stable language sql as $$ select n * 2 $$;
    create function plus_one(a int, out b int) stable language sql as $$ select a + 1 $$;
    create function pair(a int, out x int, out y int) stable language sql as $$ select a, a $$;
  `);
});
afterAll(() => env?.close());

type Arg = {
  name: string;
  type: { kind: string; name: string | null; ofType: { kind: string; name: string | null } | null };
};
async function args(field: string): Promise<Arg[] | undefined> {
  const r = (await env.gql(
    '{ __type(name: "Query") { fields { name args { name type { kind name ofType { kind name } } } } } }',
  )) as { data: { __type: { fields: { name: string; args: Arg[] }[] } } };
  return r.data.__type.fields.find((f) => f.name === field)?.args;
}

describe('variadic functions', () => {
  it('a named variadic argument is a list of its element type', async () => {
    expect(await args('total')).toEqual([
      { name: 'nums', type: { kind: 'NON_NULL', name: null, ofType: { kind: 'LIST', name: null } } },
    ]);
    const joined = await args('joined');
    expect(joined?.map((a) => [a.name, a.type.kind, a.type.ofType?.kind])).toEqual([
      ['sep', 'NON_NULL', 'SCALAR'],
      ['parts', 'LIST', 'SCALAR'],
    ]);
  });

  it('a nameless variadic argument leaves the function out, as any nameless argument does', async () => {
    expect(await args('nameless_variadic')).toBeUndefined();
    expect(await args('namelessVariadic')).toBeUndefined();
  });

  it('given a value, the call fails as PostgreSQL answers a named argument for a variadic parameter', async () => {
    expect(await env.gql('{ total(nums: [1, 2, 3]) }')).toEqual({
      data: null,
      errors: [{ message: 'function public.total(nums => integer[]) does not exist' }],
    });
  });

  it('left out, even with a default, PostgreSQL finds no function for the named arguments given', async () => {
    expect(await env.gql('{ joined(sep: "-") }')).toEqual({
      data: null,
      errors: [{ message: 'function public.joined(sep => text) does not exist' }],
    });
  });
});

describe('argument modes', () => {
  it('an INOUT argument is an argument', async () => {
    expect((await args('doubled'))?.map((a) => a.name)).toEqual(['n']);
    expect(await env.gql('{ doubled(n: 21) }')).toEqual({ data: { doubled: 42 } });
  });

  it('one OUT argument gives the return type; the IN ones stay arguments', async () => {
    expect((await args('plus_one'))?.map((a) => a.name)).toEqual(['a']);
    expect(await env.gql('{ plus_one(a: 1) }')).toEqual({ data: { plus_one: 2 } });
  });

  it('several OUT arguments return a record, which leaves the function out', async () => {
    expect(await args('pair')).toBeUndefined();
  });
});
