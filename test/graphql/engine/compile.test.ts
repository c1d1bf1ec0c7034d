/** engine.ts compile(): a request's plan and SQL without running it, against a role's catalog (catalogFor). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogFor, compile } from '../../../src/graphql/engine.js';
import type { Catalog } from '../../../src/graphql/introspect/model.js';
import { setupEnv, type Env } from './harness.js';

let env: Env;
let catalog: Catalog;
beforeAll(async () => {
  env = await setupEnv();
  catalog = await catalogFor(env.client);
});
afterAll(() => env.close());

describe('compile', () => {
  it('gives each SQL field its plan and statement, a variable as its own parameter', () => {
    const { plan, sql } = compile(catalog, {
      query:
        'query ($name: String!) { blogCollection(filter: {name: {eq: $name}}) { edges { node { id } } } }',
      variables: { name: 'alpha' },
    });
    expect(plan.kind).toBe('fields');
    if (plan.kind !== 'fields') return;
    expect(plan.fields.map((f) => [f.alias, f.kind])).toEqual([['blogCollection', 'root']]);
    expect(sql).toHaveLength(1);
    expect(sql[0]?.alias).toBe('blogCollection');
    expect(sql[0]?.sql).toMatch(/^select /);
    const i = sql[0]?.variables.indexOf('name') ?? -1;
    expect(i).toBeGreaterThanOrEqual(0);
    expect(sql[0]?.params[i]).toBe('alpha');
  });

  it('a constant field is in the plan, with no statement', () => {
    const { plan, sql } = compile(catalog, { query: '{ __typename }' });
    expect(plan).toMatchObject({
      kind: 'fields',
      fields: [{ alias: '__typename', kind: 'value', value: 'Query' }],
    });
    expect(sql).toEqual([]);
  });

  it('the statement is the one a run sends: it answers as resolve() does', async () => {
    const query = '{ blogCollection(orderBy: [{id: AscNullsLast}]) { edges { node { name } } } }';
    const [field] = compile(catalog, { query }).sql;
    if (!field) throw new Error('no statement');
    const { rows } = await env.client.query(field.sql, field.params);
    expect(Object.values(rows[0] ?? {})[0]).toEqual((await env.gql(query)).data?.['blogCollection' as never]);
  });

  it("a field's error is in the plan, with no statement for it", () => {
    const { plan, sql } = compile(catalog, { query: '{ nope }' });
    expect(plan).toMatchObject({ kind: 'fields', errors: ['Unknown field "nope" on type Query'] });
    expect(sql).toEqual([]);
  });

  it('a document that does not parse is the response the engine answers', () => {
    const { plan, sql } = compile(catalog, { query: '{ blogCollection' });
    expect(plan.kind).toBe('response');
    expect(sql).toEqual([]);
  });
});
