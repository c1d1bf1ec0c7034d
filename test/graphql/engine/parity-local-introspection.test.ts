/**
 * Introspection for local development: pg_graphql keeps it off unless a schema opts in; the default
 * project `npm start` creates opts `public` in once (enableIntrospectionForLocalDevelopment), and
 * a project's own `@graphql(...)` comment is never overwritten.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';
import { enableIntrospectionForLocalDevelopment } from '../../../src/graphql/extension/local-introspection.js';

let env: Env;
beforeAll(async () => {
  env = await setupEnv('create table note (id int primary key);');
});
afterAll(() => env?.close());

const comment = async () =>
  (
    await env.client.query<{ c: string | null }>(
      `select obj_description('public'::regnamespace, 'pg_namespace') as c`,
    )
  ).rows[0]?.c;

describe('introspection for the default local project', () => {
  it("is off by default (pg_graphql's answer), on after the default project's opt-in", async () => {
    expect(await env.gql('{ __schema { queryType { name } } }')).toEqual({
      data: null,
      errors: [{ message: 'Unknown field "__schema" on type Query' }],
    });
    const before = await comment();
    expect(await enableIntrospectionForLocalDevelopment(env.client)).toBe(true);
    const after = await comment();
    expect(after).toContain('@graphql({"introspection": true, "strata": {"detailed_errors": true}})');
    if (before) expect(after).toContain(before);
    expect(await env.gql('{ __schema { queryType { name } } }')).toEqual({
      data: { __schema: { queryType: { name: 'Query' } } },
    });
    // …and detailed errors: pg_graphql's wording, then what is wrong.
    expect(await env.gql('{ noteCollection { dneField totalCount } }')).toEqual({
      data: null,
      errors: [{ message: 'unknown field in connection: "dneField" is not a field of noteConnection' }],
    });
  });

  it("without the switch, pg_graphql's words exactly", async () => {
    await env.client.query(`comment on schema public is '@graphql({"introspection": true})'`);
    expect(await env.gql('{ noteCollection { dneField } }')).toEqual({
      data: null,
      errors: [{ message: 'unknown field in connection' }],
    });
  });

  it("keeps a comment that already has a directive (the project's choice)", async () => {
    await env.client.query(`comment on schema public is '@graphql({"inflect_names": true})'`);
    expect(await enableIntrospectionForLocalDevelopment(env.client)).toBe(false);
    expect(await comment()).toBe('@graphql({"inflect_names": true})');
  });
});
