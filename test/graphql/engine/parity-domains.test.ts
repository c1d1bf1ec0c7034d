/**
 * pg_graphql parity: columns, arguments and results of a domain type. pg_graphql 1.6.1 types a
 * value by its type's oid (graphql.rs to_graphql_type; load_sql_context.sql reads `atttypid` and
 * the type's own `typcategory`, which a domain takes from its base type): a domain is `Opaque`
 * (`OpaqueFilter`: `eq`, `is`), an array of a domain `[Opaque]`, a domain over an enum `Opaque`,
 * and a domain over an array (category A, no element type) has no type at all, so its column is
 * in no type. Strata's `domain_base_types` switch types them as their base types instead.
 * Every assertion of the default schema failed before (domains were typed as their base types),
 * and the switch was an unknown strata feature (a schema-load error).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';

const COLUMNS = `(
  id posint2 primary key, name "Name", flag "Flag", phones "Phone"[], n posint, t tags, b big,
  m mood_d, note note, ia dom_int_array, ia2 dom_int_array2)`;

const SCHEMA = `
set search_path to public, based;
comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
create schema based;
grant usage on schema based to anon, authenticated, service_role;
comment on schema based is '@graphql({"inflect_names": true, "introspection": true, "strata": {"domain_base_types": true}})';
-- AdventureWorks' domains
create domain "Name" as varchar(50);
create domain "Flag" as boolean;
create domain "Phone" as varchar(25);
create domain posint as int check (value > 0);
create domain posint2 as posint;
create domain tags as text[];
create domain big as bigint;
create type mood as enum ('happy', 'sad');
create domain mood_d as mood;
create domain note as text;
create domain dom_int as int;
create domain dom_int_array as dom_int[];
create domain dom_int_array2 as dom_int_array;
create table public.dom ${COLUMNS};
create table based.bdom ${COLUMNS};
insert into public.dom values (1, 'Bolt', true, '{555-1}', 5, '{a,b}', 7, 'happy', 'hi', '{3,4}', '{5}'),
  (2, 'Nut', false, null, 6, null, 8, 'sad', null, null, null);
insert into based.bdom select * from public.dom;
comment on table public.dom is '@graphql({"aggregate": {"enabled": true}})';
comment on table based.bdom is '@graphql({"aggregate": {"enabled": true}})';
create function _twice(d dom) returns posint stable language sql as $$ select (d.n * 2)::posint $$;
create function halve(n posint) returns posint stable language sql as $$ select (n / 2)::posint $$;
create function mood_rank(m mood_d) returns int stable language sql as $$ select 1 $$;
create function some_mood() returns mood_d stable language sql as $$ select 'sad'::mood_d $$;
create function tag_list() returns tags stable language sql as $$ select '{x}'::tags $$;
create function based._btwice(d based.bdom) returns posint stable language sql as $$ select (d.n * 2)::posint $$;
create function based.bhalve(n posint) returns posint stable language sql as $$ select (n / 2)::posint $$;
create function based.btag_list() returns tags stable language sql as $$ select '{x}'::tags $$;
`;

let env: Env;
beforeAll(async () => {
  env = await setupEnv(SCHEMA);
});
afterAll(() => env.close());

interface TypeRef {
  name: string | null;
  kind: string;
  ofType: TypeRef | null;
}
const typeQuery = '{ name kind ofType { name kind ofType { name kind } } }';
async function fieldTypes(type: string, what: 'fields' | 'inputFields'): Promise<Record<string, TypeRef>> {
  const r = (await env.gql(`{ __type(name: "${type}") { ${what} { name type ${typeQuery} } } }`)) as {
    data: { __type: Record<string, { name: string; type: TypeRef }[]> | null };
  };
  return Object.fromEntries((r.data.__type?.[what] ?? []).map((f) => [f.name, f.type]));
}
const scalar = (name: string) => ({ kind: 'SCALAR', name });
const list = (name: string) => ({ kind: 'LIST', ofType: { name } });
const input = (name: string) => ({ kind: 'INPUT_OBJECT', name });

describe("domains by pg_graphql's rule (default)", () => {
  it('a domain over text, varchar(n), boolean, int, bigint or an enum is Opaque; an array of a domain [Opaque]', async () => {
    const f = await fieldTypes('Dom', 'fields');
    expect(f.id).toMatchObject({ kind: 'NON_NULL', ofType: scalar('Opaque') });
    for (const c of ['name', 'flag', 'n', 'b', 'm', 'note']) expect(f[c], c).toMatchObject(scalar('Opaque'));
    expect(f.phones).toMatchObject(list('Opaque'));
  });

  it('a domain over an array has no GraphQL type: its column is in no type, a function returning it is left out', async () => {
    for (const [type, what] of [
      ['Dom', 'fields'],
      ['DomFilter', 'inputFields'],
      ['DomInsertInput', 'inputFields'],
      ['DomUpdateInput', 'inputFields'],
    ] as const) {
      const f = await fieldTypes(type, what);
      expect(Object.keys(f), type).toContain('n');
      for (const c of ['t', 'ia', 'ia2']) expect(Object.keys(f), `${type}.${c}`).not.toContain(c);
    }
    // ... but pg_graphql's OrderBy goes by the column's type name (graphql.rs OrderByEntityType):
    // a domain over an array is a sort key there, an array of a domain is not.
    const order = Object.keys(await fieldTypes('DomOrderBy', 'inputFields'));
    expect(order).toEqual(
      expect.arrayContaining(['id', 'name', 'flag', 'n', 't', 'b', 'm', 'note', 'ia', 'ia2']),
    );
    expect(order).not.toContain('phones');
    expect(
      await env.gql('{ domCollection(orderBy: [{t: AscNullsFirst}], first: 1) { edges { node { id } } } }'),
    ).toEqual({
      data: { domCollection: { edges: [{ node: { id: 2 } }] } },
    });
    expect(
      await env.gql('{ domCollection(orderBy: [{ia: DescNullsLast}], first: 1) { edges { node { id } } } }'),
    ).toEqual({
      data: { domCollection: { edges: [{ node: { id: 1 } }] } },
    });
    const page = (await env.gql(
      '{ domCollection(orderBy: [{t: AscNullsFirst}], first: 1) { edges { cursor } } }',
    )) as {
      data: { domCollection: { edges: { cursor: string }[] } };
    };
    const after = page.data.domCollection.edges[0]?.cursor;
    expect(
      await env.gql(
        `{ domCollection(orderBy: [{t: AscNullsFirst}], after: "${after}") { edges { node { id } } } }`,
      ),
    ).toEqual({ data: { domCollection: { edges: [{ node: { id: 1 } }] } } });
    const q = await fieldTypes('Query', 'fields');
    expect(Object.keys(q)).not.toContain('tagList');
    // A domain over an enum has the enum's category: as an argument or result it leaves the
    // function out, as an enum does (sql_types.rs arg_types_are_supported / return_type_is_supported).
    expect(Object.keys(q)).not.toContain('moodRank');
    expect(Object.keys(q)).not.toContain('someMood');
    expect(Object.keys(q)).toContain('halve');
  });

  it('filters are OpaqueFilter (eq, is); an array of a domain has none; inputs are Opaque', async () => {
    const filter = await fieldTypes('DomFilter', 'inputFields');
    for (const c of ['name', 'flag', 'n', 'b', 'm', 'note'])
      expect(filter[c], c).toMatchObject(input('OpaqueFilter'));
    expect(Object.keys(filter)).not.toContain('phones');
    expect(Object.keys(await fieldTypes('OpaqueFilter', 'inputFields')).sort()).toEqual(['eq', 'is']);
    const ins = await fieldTypes('DomInsertInput', 'inputFields');
    expect(ins.name).toMatchObject(scalar('Opaque'));
    expect(ins.phones).toMatchObject(list('Opaque'));
  });

  it('a client declaring $v: Opaque reads, filters and writes such columns; values are written as pg_graphql writes them', async () => {
    expect(
      await env.gql(
        'query Q($v: Opaque, $f: Opaque) { domCollection(filter: {name: {eq: $v}, flag: {eq: $f}}) { edges { node { id name flag phones n b m note } } } }',
        { v: 'Bolt', f: true },
      ),
    ).toEqual({
      data: {
        domCollection: {
          edges: [
            {
              node: {
                id: 1,
                name: 'Bolt',
                flag: true,
                phones: ['555-1'],
                n: 5,
                b: 7,
                m: 'happy',
                note: 'hi',
              },
            },
          ],
        },
      },
    });
    await env.client.query('begin');
    try {
      expect(
        await env.gql(
          'mutation M($p: [Opaque]) { insertIntoDomCollection(objects: [{id: 3, name: "Washer", flag: false, phones: $p, n: 9}]) { records { id name flag phones n } } }',
          { p: ['555-2'] },
        ),
      ).toEqual({
        data: {
          insertIntoDomCollection: {
            records: [{ id: 3, name: 'Washer', flag: false, phones: ['555-2'], n: 9 }],
          },
        },
      });
      const bad = (await env.gql(
        'mutation { insertIntoDomCollection(objects: [{id: 4, n: -1}]) { affectedCount } }',
      )) as { errors?: { message: string }[] };
      expect(bad.errors?.[0]?.message).toMatch(/posint/);
    } finally {
      await env.client.query('rollback');
    }
  });

  it('function arguments and results of a domain type are Opaque; the domain check applies', async () => {
    const q = await fieldTypes('Query', 'fields');
    expect(q.halve).toMatchObject(scalar('Opaque'));
    expect((await fieldTypes('Dom', 'fields')).twice).toMatchObject(scalar('Opaque'));
    expect(await env.gql('{ domCollection(first: 1) { edges { node { twice } } } halve(n: 8) }')).toEqual({
      data: { domCollection: { edges: [{ node: { twice: 10 } }] }, halve: 4 },
    });
    const bad = (await env.gql('{ halve(n: -8) }')) as { data: unknown; errors?: { message: string }[] };
    expect(bad.data).toBeNull();
    expect(bad.errors?.[0]?.message).toMatch(/posint/);
  });

  it('aggregates leave domain columns out (pg_graphql checks the type name: a domain is not numeric)', async () => {
    expect(Object.keys(await fieldTypes('DomAggregate', 'fields'))).toEqual(['count']);
    expect(Object.keys(await fieldTypes('BdomSumAggregateResult', 'fields')).sort()).toEqual([
      'b',
      'id',
      'n',
    ]);
    expect(await env.gql('{ domCollection { aggregate { count } } }')).toEqual({
      data: { domCollection: { aggregate: { count: 2 } } },
    });
  });

  it('<Type>ByPk over a domain-typed key stays (a Strata addition), with an Opaque argument', async () => {
    const r = (await env.gql(
      '{ __type(name: "Query") { fields { name args { name type ' + typeQuery + ' } } } }',
    )) as {
      data: { __type: { fields: { name: string; args: { name: string; type: TypeRef }[] }[] } };
    };
    const byPk = r.data.__type.fields.find((f) => f.name === 'domByPk');
    expect(byPk?.args).toEqual([
      { name: 'id', type: { kind: 'NON_NULL', name: null, ofType: { ...scalar('Opaque'), ofType: null } } },
    ]);
    expect(await env.gql('{ domByPk(id: 2) { name } }')).toEqual({ data: { domByPk: { name: 'Nut' } } });
  });
});

describe('domains with the domain_base_types switch', () => {
  it('columns are typed as their base types, through domains of domains, arrays and enums', async () => {
    const f = await fieldTypes('Bdom', 'fields');
    expect(f.id).toMatchObject({ kind: 'NON_NULL', ofType: scalar('Int') });
    expect(f.name).toMatchObject(scalar('String'));
    expect(f.flag).toMatchObject(scalar('Boolean'));
    expect(f.phones).toMatchObject(list('String'));
    expect(f.n).toMatchObject(scalar('Int'));
    expect(f.t).toMatchObject(list('String'));
    expect(f.b).toMatchObject(scalar('BigInt'));
    expect(f.m).toMatchObject({ kind: 'ENUM', name: 'Mood' });
    expect(f.ia).toMatchObject({ kind: 'LIST', ofType: scalar('Int') });
    expect(f.ia2).toMatchObject({ kind: 'LIST', ofType: scalar('Int') });
    const filter = await fieldTypes('BdomFilter', 'inputFields');
    expect(filter.name).toMatchObject(input('StringFilter'));
    expect(filter.phones).toMatchObject(input('StringListFilter'));
    expect(
      await env.gql(
        '{ bdomCollection(filter: {name: {like: "B%"}, n: {gt: 1}, b: {eq: "7"}, ia: {contains: [3]}}) { edges { node { id name flag n t b m ia ia2 } } } }',
      ),
    ).toEqual({
      data: {
        bdomCollection: {
          edges: [
            {
              node: {
                id: 1,
                name: 'Bolt',
                flag: true,
                n: 5,
                t: ['a', 'b'],
                b: '7',
                m: 'happy',
                ia: [3, 4],
                ia2: [5],
              },
            },
          ],
        },
      },
    });
  });

  it('function arguments and results are their base types too', async () => {
    const q = await fieldTypes('Query', 'fields');
    expect(q.bhalve).toMatchObject(scalar('Int'));
    expect(q.btagList).toMatchObject(list('String'));
    expect((await fieldTypes('Bdom', 'fields')).btwice).toMatchObject(scalar('Int'));
    expect(await env.gql('{ bhalve(n: 8) btagList }')).toEqual({ data: { bhalve: 4, btagList: ['x'] } });
  });
});
