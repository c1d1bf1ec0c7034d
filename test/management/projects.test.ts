/**
 * GET/POST /v1/projects and the adjacent project routes: a project created through the API is real (its own
 * database, keys, GraphQL and Storage at its own address) and deleting it removes the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SupabaseManagementAPI } from 'supabase-management-js';
import { decodeJwt } from 'jose';
import { request as httpRequest } from 'node:http';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { withClient } from '../../src/db/pool.js';
import { serverUrl } from '../support/database.js';
import { api } from '../support/management.js';

let tp: TestPlatform;
let client: SupabaseManagementAPI;
beforeAll(async () => {
  // A second "server" (the same PostgreSQL under another id) to see placement recorded.
  tp = await startTestPlatform({ extraDbServers: [{ id: 'second', url: serverUrl() }] });
  client = new SupabaseManagementAPI({ accessToken: tp.platform.defaultAccessToken, baseUrl: tp.url });
});
afterAll(async () => {
  await tp?.close();
});

async function databaseExists(name: string): Promise<boolean> {
  return withClient(
    serverUrl(),
    async (c) => ((await c.query('select 1 from pg_database where datname = $1', [name])).rowCount ?? 0) > 0,
  );
}

async function dbNameOf(ref: string): Promise<string> {
  return (
    await tp.platform.pool.query<{ db_name: string }>('select db_name from projects where ref = $1', [ref])
  ).rows[0]!.db_name;
}

/** An HTTP request with a chosen Host header (fetch does not let a caller set Host). */
function request(
  path: string,
  opts: { method?: string; host?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: tp.port,
        path,
        method: opts.method ?? 'GET',
        headers: { ...opts.headers, ...(opts.host ? { host: opts.host } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A GraphQL request to a project at `<ref>.localhost:<port>` (Host header) or under /project/<ref>/. */
async function graphql(ref: string, apikey: string, via: 'host' | 'prefix') {
  const r = await request(via === 'prefix' ? `/project/${ref}/graphql/v1` : '/graphql/v1', {
    method: 'POST',
    host: via === 'host' ? `${ref}.localhost:${tp.port}` : undefined,
    headers: { 'content-type': 'application/json', apikey },
    body: JSON.stringify({ query: '{ __typename }' }),
  });
  return { status: r.status };
}

const validBody = {
  db_pass: 'correct-horse-battery-staple',
  name: 'acme-prod',
  organization_slug: 'default-org',
  region: 'us-east-1' as const,
};

describe('listing', () => {
  it('lists the default project with its database block', async () => {
    const { data, status } = await client.listAllProjects();
    expect(status).toBe(200);
    expect(data).toEqual([
      {
        id: tp.platform.defaultRef,
        ref: tp.platform.defaultRef,
        organization_id: 'default-org',
        organization_slug: 'default-org',
        name: 'Default Project',
        region: 'local',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        status: 'ACTIVE_HEALTHY',
        database: {
          host: expect.any(String),
          version: expect.stringMatching(/^\d+/),
          postgres_engine: expect.stringMatching(/^\d+$/),
          release_channel: 'ga',
        },
      },
    ]);
  });
});

describe('creating', () => {
  let created: { ref: string; name: string };

  it('creates a real project (201) with its own database and keys', async () => {
    const { data, status } = await client.createAProject(validBody);
    expect(status).toBe(201);
    expect(data).toEqual({
      id: data.ref,
      ref: expect.stringMatching(/^[a-z]{20}$/),
      organization_id: 'default-org',
      organization_slug: 'default-org',
      name: 'acme-prod',
      region: 'us-east-1',
      created_at: expect.any(String),
      status: 'ACTIVE_HEALTHY',
    });
    expect(data).not.toHaveProperty('database');
    created = data;
    expect(await databaseExists(await dbNameOf(data.ref))).toBe(true);
    // placement: the default project is on "primary", so the new one goes to the emptier "second"
    const placed = await tp.platform.pool.query('select db_server from projects where ref = $1', [data.ref]);
    expect(placed.rows[0].db_server).toBe('second');
    const servers = await tp.platform.pool.query('select id from db_servers order by id');
    expect(servers.rows.map((r) => r.id)).toEqual(['primary', 'second']);
  });

  it('GET /v1/projects/{ref} and the listing show it', async () => {
    const { data } = await client.getProject(created.ref);
    expect(data).toMatchObject({ ref: created.ref, name: 'acme-prod', database: { release_channel: 'ga' } });
    const list = await client.listAllProjects();
    expect(list.data.map((p) => p.ref)).toContain(created.ref);
  });

  it('api-keys returns the anon and service_role keys, signed for this project', async () => {
    const { data, status } = await client.getProjectApiKeys(created.ref);
    expect(status).toBe(200);
    expect(data.map((k) => [k.name, k.type])).toEqual([
      ['anon', 'legacy'],
      ['service_role', 'legacy'],
    ]);
    const ctx = (await tp.platform.project(created.ref))!;
    expect(data[0]).toEqual({
      name: 'anon',
      api_key: ctx.anonKey,
      id: 'anon',
      type: 'legacy',
      hash: '',
      prefix: '',
      description: 'Legacy anon API key',
    });
    expect(data[1]!.api_key).toBe(ctx.serviceRoleKey);
    expect(decodeJwt(data[0]!.api_key!)).toMatchObject({ role: 'anon', ref: created.ref, iss: 'supabase' });
    expect(decodeJwt(data[1]!.api_key!)).toMatchObject({ role: 'service_role', ref: created.ref });
  });

  it("its GraphQL endpoint answers with its own key and refuses another project's key", async () => {
    const keys = (await client.getProjectApiKeys(created.ref)).data;
    const anon = keys.find((k) => k.name === 'anon')!.api_key!;
    const defaultCtx = await tp.platform.defaultProject();
    expect((await graphql(defaultCtx.ref, defaultCtx.anonKey, 'prefix')).status).toBe(200);
    for (const via of ['host', 'prefix'] as const) {
      expect((await graphql(created.ref, anon, via)).status, via).toBe(200);
      expect((await graphql(created.ref, defaultCtx.anonKey, via)).status, via).toBe(401);
    }
    // and its key does not open the default project
    expect((await graphql(defaultCtx.ref, anon, 'prefix')).status).toBe(401);
  });

  it('its Storage endpoint answers with its own service key and refuses another project key', async () => {
    const keys = (await client.getProjectApiKeys(created.ref)).data;
    const service = keys.find((k) => k.name === 'service_role')!.api_key!;
    const auth = { apikey: service, authorization: `Bearer ${service}` };
    const probe = await request(`/project/${created.ref}/storage/v1/bucket`, { headers: auth });
    expect(probe.status).toBe(200);
    const viaHost = await request('/storage/v1/bucket', {
      host: `${created.ref}.localhost:${tp.port}`,
      headers: auth,
    });
    expect(viaHost.status).toBe(200);
    const other = (await tp.platform.defaultProject()).serviceRoleKey;
    const refused = await request(`/project/${created.ref}/storage/v1/bucket`, {
      headers: { apikey: other, authorization: `Bearer ${other}` },
    });
    // Upstream Storage answers a refused JWT with HTTP 400 and statusCode "403" in the body.
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text)).toMatchObject({ statusCode: '403', error: 'Unauthorized' });
  });

  it('accepts the older organization_id, region_selection, plan and ignored fields', async () => {
    const legacy = await api(tp, 'POST', '/v1/projects', {
      body: {
        db_pass: 'pw',
        name: 'legacy',
        organization_id: 'default-org',
        region: 'eu-west-1',
        plan: 'free',
        kps_enabled: false,
      },
    });
    expect(legacy.status).toBe(201);
    expect(legacy.body).toMatchObject({ organization_slug: 'default-org', region: 'eu-west-1' });
    const smart = await api(tp, 'POST', '/v1/projects', {
      body: {
        db_pass: 'pw',
        name: 'smart',
        organization_slug: 'default-org',
        region_selection: { type: 'smartGroup', code: 'emea' },
        desired_instance_size: 'micro',
      },
    });
    expect(smart.status).toBe(201);
    expect(smart.body.region).toBe('eu-central-1');
    const specific = await api(tp, 'POST', '/v1/projects', {
      body: {
        db_pass: 'pw',
        name: 'specific',
        organization_slug: 'default-org',
        region_selection: { type: 'specific', code: 'ap-south-1' },
      },
    });
    expect(specific.body.region).toBe('ap-south-1');
    const none = await api(tp, 'POST', '/v1/projects', {
      body: { db_pass: 'pw', name: 'no region', organization_slug: 'default-org' },
    });
    expect(none.status).toBe(201);
    expect(none.body.region).toBe('local');
    for (const r of [legacy, smart, specific, none])
      expect((await api(tp, 'DELETE', `/v1/projects/${r.body.ref}`)).status).toBe(200);
  });

  it.each([
    [{ ...validBody, region: 'mars-north-1' }, /^region must be one of the following values: us-east-1, /],
    [{ ...validBody, favourite_colour: 'blue' }, /^property favourite_colour should not exist$/],
    [{ ...validBody, db_pass: undefined }, /^db_pass is required$/],
    [{ ...validBody, name: undefined }, /^name is required$/],
    [{ ...validBody, name: 'n'.repeat(257) }, /^name must be shorter than or equal to 256 characters$/],
    [{ ...validBody, organization_slug: undefined }, /^organization_slug is required$/],
    [{ ...validBody, organization_slug: 'bad slug!' }, /^organization_slug must match pattern/],
    [
      { ...validBody, region_selection: { type: 'specific', code: 'us-east-1' } },
      /^Only one of region or region_selection can be specified$/,
    ],
    [
      { ...validBody, region: undefined, region_selection: { type: 'smartGroup', code: 'mars' } },
      /^code must be one of/,
    ],
    [{ ...validBody, region: undefined, region_selection: { type: 'nearest' } }, /^type must be one of/],
    [{ ...validBody, plan: 'enterprise' }, /^plan must be one of the following values: free, pro$/],
    [{ ...validBody, desired_instance_size: 'huge' }, /^desired_instance_size must be one of/],
    [{ ...validBody, template_url: 'not a url' }, /^template_url must be a URL address$/],
    [{ ...validBody, kps_enabled: 'yes' }, /^kps_enabled must be a boolean value$/],
  ])('refuses %j with 400 naming the field', async (body, message) => {
    const before = (await tp.platform.pool.query('select count(*)::int as n from projects')).rows[0].n;
    const r = await api(tp, 'POST', '/v1/projects', { body });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(message);
    expect((await tp.platform.pool.query('select count(*)::int as n from projects')).rows[0].n).toBe(before);
  });

  it('deleting drops the database and leaves a REMOVED tombstone', async () => {
    const dbName = await dbNameOf(created.ref);
    await api(tp, 'POST', `/v1/projects/${created.ref}/secrets`, { body: [{ name: 'GONE', value: 'x' }] });
    const { data, status } = await client.deleteAProject(created.ref);
    expect(status).toBe(200);
    expect(data).toEqual({ id: expect.any(Number), ref: created.ref, name: 'acme-prod' });
    expect(await databaseExists(dbName)).toBe(false);
    expect(
      (
        await tp.platform.pool.query(
          'select count(*)::int as n from project_secrets where project_ref = $1',
          [created.ref],
        )
      ).rows[0].n,
    ).toBe(0);
    for (const path of [
      `/v1/projects/${created.ref}`,
      `/v1/projects/${created.ref}/secrets`,
      `/v1/projects/${created.ref}/api-keys`,
      `/v1/projects/${created.ref}/types/typescript`,
    ]) {
      const r = await api(tp, 'GET', path);
      expect(r.status, path).toBe(400);
      expect(r.body).toEqual({ message: 'Resource has been removed' });
    }
    expect((await api(tp, 'DELETE', `/v1/projects/${created.ref}`)).body).toEqual({
      message: 'Resource has been removed',
    });
    expect((await client.listAllProjects()).data.map((p) => p.ref)).not.toContain(created.ref);
    expect((await graphql(created.ref, 'any', 'prefix')).status).toBe(404);
    expect(await tp.platform.project(created.ref)).toBeUndefined();
    const tomb = await tp.platform.pool.query(
      'select status, jwt_secret, anon_key, service_role_key from projects where ref = $1',
      [created.ref],
    );
    expect(tomb.rows[0]).toEqual({ status: 'REMOVED', jwt_secret: '', anon_key: '', service_role_key: '' });
  });

  it('refuses to delete the default project', async () => {
    const r = await api(tp, 'DELETE', `/v1/projects/${tp.platform.defaultRef}`);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'The default project cannot be deleted' });
  });

  it('projects created in a new organization belong to it', async () => {
    const org = (await client.createAnOrganization({ name: 'Second' })).data;
    const p = await client.createAProject({ db_pass: 'pw', name: 'in-second', organization_slug: org.slug });
    expect(p.data.organization_slug).toBe(org.slug);
    await client.deleteAProject(p.data.ref);
  });
});
