/** GET/POST /v1/organizations: over plain HTTP and through supabase-management-js v2. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SupabaseManagementAPI, SupabaseManagementAPIError } from 'supabase-management-js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api, createOtherUser } from '../support/management.js';

let tp: TestPlatform;
let client: SupabaseManagementAPI;
beforeAll(async () => {
  tp = await startTestPlatform();
  client = new SupabaseManagementAPI({ accessToken: tp.platform.defaultAccessToken, baseUrl: tp.url });
});
afterAll(async () => {
  await tp?.close();
});

describe('organizations', () => {
  it('lists the default organization', async () => {
    const { data, status } = await client.listAllOrganizations();
    expect(status).toBe(200);
    expect(data).toEqual([{ id: 'default-org', slug: 'default-org', name: 'Default Organization' }]);
  });

  it('creates one (201, id = slug, 20 letters) and lists it afterwards', async () => {
    const { data, status } = await client.createAnOrganization({ name: 'Test Org' });
    expect(status).toBe(201);
    expect(data).toEqual({
      id: expect.stringMatching(/^[a-z]{20}$/),
      slug: expect.any(String),
      name: 'Test Org',
    });
    expect(data.id).toBe(data.slug);
    const list = await client.listAllOrganizations();
    expect(list.data.map((o) => o.slug)).toContain(data.slug);
  });

  it("does not show other users' organizations", async () => {
    const other = await createOtherUser(tp, 'orgs');
    const mine = await api(tp, 'GET', '/v1/organizations');
    expect(mine.body.map((o: { slug: string }) => o.slug)).not.toContain(other.orgSlug);
    const theirs = await api(tp, 'GET', '/v1/organizations', { token: other.token });
    expect(theirs.body).toEqual([{ id: other.orgSlug, slug: other.orgSlug, name: expect.any(String) }]);
  });

  it.each([
    [{}, 'name is required'],
    [{ name: 12 }, 'name must be a string'],
    [{ name: '' }, 'name should not be empty'],
    [{ name: 'x'.repeat(257) }, 'name must be shorter than or equal to 256 characters'],
    [{ name: 'ok', plan: 'free' }, 'property plan should not exist'],
    [['Acme'], 'Request body must be a JSON object'],
  ])('refuses %j with 400 naming the field', async (body, message) => {
    const r = await api(tp, 'POST', '/v1/organizations', { body });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message });
  });

  it('a missing body is 400', async () => {
    const r = await api(tp, 'POST', '/v1/organizations', {
      rawBody: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'Request body must be a JSON object' });
  });

  it('the client library surfaces error messages', async () => {
    const err = await client.createAnOrganization({ name: '' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SupabaseManagementAPIError);
    expect((err as SupabaseManagementAPIError).status).toBe(400);
    expect((err as SupabaseManagementAPIError).data).toEqual({ message: 'name should not be empty' });
  });
});
