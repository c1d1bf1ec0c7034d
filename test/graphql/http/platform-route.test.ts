/** /graphql/v1 on the platform's Fastify app (src/server.ts): the project from the address, its keys, its database. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestPlatform, type TestPlatform } from '../../support/platform.js';
import { graphqlInstallHook } from '../../../src/graphql/extension/install.js';
import { resolveWithPool } from '../../../src/graphql/engine.js';
import type { ProjectContext } from '../../../src/platform/project-context.js';
import { http, postGraphQL } from '../../support/graphql.js';

let tp: TestPlatform;
let project: ProjectContext;
let other: ProjectContext;

async function seed(p: ProjectContext, title: string) {
  const c = new pg.Client({ connectionString: p.superuserUrl });
  await c.connect();
  await c.query(
    `create table public.todo (id int primary key, title text not null); insert into public.todo values (1, '${title}');`,
  );
  await c.end();
}

beforeAll(async () => {
  // The engine's objects on every project database (plain SQL: the run's server may not be ours to add extension files to).
  tp = await startTestPlatform({}, { projectBootstrapHooks: [graphqlInstallHook({ extensionDir: false })] });
  project = await tp.platform.defaultProject();
  other = await tp.platform.createProject({ name: 'other', organizationId: 'default-org' });
  await seed(project, 'default project row');
  await seed(other, 'other project row');
});

afterAll(async () => {
  await tp?.close();
});

const Q = { query: '{ todoCollection { edges { node { title } } } }' };

describe('platform GraphQL route', () => {
  it("answers with the engine's answer for the project's database", async () => {
    const r = await postGraphQL(tp.url + '/graphql/v1', Q, { apikey: project.anonKey });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual(
      await resolveWithPool(
        project.pool,
        { role: 'anon', claims: { role: 'anon' } },
        { ...Q, variables: null, operationName: null },
      ),
    );
    expect(r.json).toEqual({
      data: { todoCollection: { edges: [{ node: { title: 'default project row' } }] } },
    });
  });

  it("routes by /project/<ref> prefix to that project's database", async () => {
    const byPrefix = await postGraphQL(`${tp.url}/project/${other.ref}/graphql/v1`, Q, {
      apikey: other.anonKey,
    });
    expect(byPrefix.json).toEqual({
      data: { todoCollection: { edges: [{ node: { title: 'other project row' } }] } },
    });
    const asService = await postGraphQL(`${tp.url}/project/${other.ref}/graphql/v1`, Q, {
      apikey: other.serviceRoleKey,
    });
    expect(asService.json).toEqual(byPrefix.json);
  });

  it('GET queries work on the platform route', async () => {
    const r = await http(`${tp.url}/graphql/v1?${new URLSearchParams({ query: Q.query })}`, {
      headers: { apikey: project.anonKey, accept: 'application/json' },
    });
    expect(r.status).toBe(200);
    expect(r.json.data.todoCollection.edges).toHaveLength(1);
  });

  it("refuses another project's key, a missing key, and unknown projects", async () => {
    const foreign = await postGraphQL(tp.url + '/graphql/v1', Q, { apikey: other.anonKey });
    expect(foreign.status).toBe(401);
    expect(foreign.json.message).toBe('Invalid API key');
    const missing = await postGraphQL(tp.url + '/graphql/v1', Q);
    expect(missing.status).toBe(401);
    expect(missing.json.message).toBe('No API key found in request');
    const unknown = await postGraphQL(`${tp.url}/project/aaaaaaaaaaaaaaaaaaaa/graphql/v1`, Q, {
      apikey: project.anonKey,
    });
    expect(unknown.status).toBe(404);
  });

  it('the trailing-slash path is 404, GraphiQL is served to browsers', async () => {
    expect((await postGraphQL(tp.url + '/graphql/v1/', Q, { apikey: project.anonKey })).status).toBe(404);
    const page = await http(tp.url + '/graphql/v1', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    // Works offline: GraphiQL's code is in the page, nothing is loaded from another host.
    const html = page.text;
    expect(html).not.toMatch(/<script[^>]+src=["']https?:/i);
    expect(html).not.toMatch(/<link[^>]+href=["']https?:/i);
    expect(html.length).toBeGreaterThan(100_000);
  });

  it("applies the platform's body limit (413 JSON)", async () => {
    const big = { query: `{ __typename } # ${'x'.repeat(tp.config.bodyLimit + 10)}` };
    const r = await postGraphQL(tp.url + '/graphql/v1', big, { apikey: project.anonKey });
    expect(r.status).toBe(413);
    expect(r.json.errors[0].message).toMatch(/too large/i);
  });

  it('applies the default depth limit', async () => {
    let q = 'id';
    for (let i = 0; i < 25; i++) q = `f${i} { ${q} }`;
    const r = await postGraphQL(tp.url + '/graphql/v1', { query: `{ ${q} }` }, { apikey: project.anonKey });
    expect(r.json).toEqual({
      errors: [{ message: 'Query depth 26 exceeds the maximum allowed depth of 20' }],
    });
  });
});
