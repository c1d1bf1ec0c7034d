/**
 * pg_graphql parity: `__typename` inside introspection follows pg_graphql's resolver (builder.rs):
 * on a __Type it is the described type's name (null for LIST/NON_NULL), on a __Field, __InputValue
 * or __EnumValue their own name, on __Schema the root field's name ("__schema"), on __Directive
 * "__Directive" — through aliases and fragments too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';

let env: Env;
beforeAll(async () => {
  env = await setupEnv(`
    comment on schema public is '@graphql({"introspection": true})';
    create type color as enum ('red', 'green');
    create table thing (id int primary key, color color not null);
  `);
});
afterAll(() => env.close());

describe('__typename inside introspection', () => {
  it('on __Type is the described type, null on wrappers', async () => {
    expect(
      await env.gql(
        '{ __type(name: "thing") { __typename name fields { __typename name type { __typename kind ofType { __typename name } } } } }',
      ),
    ).toMatchObject({
      data: {
        __type: {
          __typename: 'thing',
          name: 'thing',
          fields: expect.arrayContaining([
            {
              __typename: 'color',
              name: 'color',
              type: { __typename: null, kind: 'NON_NULL', ofType: { __typename: 'color', name: 'color' } },
            },
          ]),
        },
      },
    });
  });

  it('on __EnumValue and __InputValue is their name; aliases and fragments keep the rule', async () => {
    const res = await env.gql(`
      { __type(name: "color") { t: __typename enumValues { __typename } }
        args: __type(name: "Query") { ...F } }
      fragment F on __Type { fields { name args { k: __typename } } }`);
    const data = res.data as {
      __type: { t: string; enumValues: { __typename: string }[] };
      args: { fields: { name: string; args: { k: string }[] }[] };
    };
    expect(data.__type).toEqual({ t: 'color', enumValues: [{ __typename: 'red' }, { __typename: 'green' }] });
    const coll = data.args.fields.find((f) => f.name === 'thingCollection') ?? { args: [] };
    expect(coll.args.map((a) => a.k)).toEqual([
      'first',
      'last',
      'before',
      'after',
      'offset',
      'filter',
      'orderBy',
    ]);
  });

  it('on __Schema is "__schema" and on __Directive "__Directive"', async () => {
    expect(
      await env.gql(
        '{ s: __schema { __typename a: __typename queryType { __typename } directives { __typename name } } }',
      ),
    ).toEqual({
      data: {
        s: {
          __typename: '__schema',
          a: '__schema',
          queryType: { __typename: 'Query' },
          directives: [
            { __typename: '__Directive', name: 'include' },
            { __typename: '__Directive', name: 'skip' },
          ],
        },
      },
    });
  });

  it('outside introspection __typename is unchanged', async () => {
    expect(await env.gql('{ __typename thingCollection { __typename } }')).toEqual({
      data: { __typename: 'Query', thingCollection: { __typename: 'thingConnection' } },
    });
  });
});
