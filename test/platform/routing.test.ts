import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { postGraphQL } from '../support/graphql.js';

let tp: TestPlatform;
beforeAll(async () => {
  tp = await startTestPlatform();
});
afterAll(async () => {
  await tp?.close();
});

async function gql(path: string, headers: Record<string, string>) {
  const r = await postGraphQL(tp.url + path, { query: '{ __typename }' }, headers);
  return { status: r.status, body: r.json ?? null };
}

describe('project routing and apikey checking', () => {
  it('refuses /graphql/v1 without an apikey with a 401 JSON error', async () => {
    const r = await gql('/graphql/v1', {});
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ message: expect.any(String) });
  });

  it('refuses a wrong apikey', async () => {
    const r = await gql('/graphql/v1', { apikey: 'not-a-key' });
    expect(r.status).toBe(401);
  });

  it('accepts the anon key at the bare address, the /project/<ref> prefix and <ref>.localhost', async () => {
    const p = await tp.platform.defaultProject();
    expect((await gql('/graphql/v1', { apikey: p.anonKey })).status).toBe(200);
    expect((await gql(`/project/${p.ref}/graphql/v1`, { apikey: p.anonKey })).status).toBe(200);
    expect((await gql('/graphql/v1', { apikey: p.anonKey, host: `${p.ref}.localhost` })).status).toBe(200);
  });

  it('does not accept the trailing-slash path', async () => {
    const p = await tp.platform.defaultProject();
    const res = await fetch(tp.url + '/graphql/v1/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', apikey: p.anonKey },
      body: '{"query":"{__typename}"}',
    });
    expect(res.status).toBe(404);
  });

  it('an unknown project ref is 404', async () => {
    const p = await tp.platform.defaultProject();
    const r = await gql('/project/aaaaaaaaaaaaaaaaaaaa/graphql/v1', { apikey: p.anonKey });
    expect(r.status).toBe(404);
  });

  it("another project's keys are refused", async () => {
    const other = await tp.platform.createProject({ name: 'other', organizationId: 'default-org' });
    const p = await tp.platform.defaultProject();
    expect((await gql(`/project/${p.ref}/graphql/v1`, { apikey: other.anonKey })).status).toBe(401);
    expect((await gql(`/project/${other.ref}/graphql/v1`, { apikey: other.anonKey })).status).toBe(200);
  });
});
