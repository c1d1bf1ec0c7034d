/** /v1/projects/{ref}/custom-hostname: the hostname state machine against a loopback DNS server, then Host routing. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { SupabaseManagementAPI } from 'supabase-management-js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { api } from '../support/management.js';

const HOST = 'api.strata-test.example';
const NONE = 'No custom hostname configuration found.';

let tp: TestPlatform;
let dns: TestDnsServer;
let ref: string;
let client: SupabaseManagementAPI;
beforeAll(async () => {
  dns = await startDnsServer();
  tp = await startTestPlatform({ dnsResolver: dns.address });
  // a project other than the default one, so that requests reaching it cannot be a default-project fallback
  ref = (await tp.platform.createProject({ name: 'hostnames', organizationId: 'default-org' })).ref;
  client = new SupabaseManagementAPI({ accessToken: tp.platform.defaultAccessToken, baseUrl: tp.url });
});
afterAll(async () => {
  await tp?.close();
  await dns?.close();
});

const path = (p = '') => `/v1/projects/${ref}/custom-hostname${p}`;

/** POST {__typename} to the platform's address with this Host header (fetch cannot set Host; node:http can). */
function graphqlVia(host: string, apikey: string): Promise<number> {
  const body = JSON.stringify({ query: '{ __typename }' });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: tp.port,
        path: '/graphql/v1',
        method: 'POST',
        headers: {
          host,
          apikey,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('custom hostname state machine', () => {
  it('without a configuration: GET, reverify and activate answer 400 "No custom hostname configuration found."', async () => {
    for (const [method, p] of [
      ['GET', ''],
      ['POST', '/reverify'],
      ['POST', '/activate'],
    ] as const) {
      const r = await api(tp, method, path(p));
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ message: NONE });
    }
    // DELETE without configuration is a no-op
    expect((await api(tp, 'DELETE', path())).status).toBe(200);
  });

  it('initialize validates the hostname', async () => {
    for (const bad of [
      {},
      { custom_hostname: '' },
      { custom_hostname: 'no_underscores.example.com' },
      { custom_hostname: 'localhost' },
      { custom_hostname: '10.0.0.1' },
      { custom_hostname: 'x'.repeat(254) },
    ]) {
      const r = await api(tp, 'POST', path('/initialize'), { body: bad });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.message).toEqual(expect.any(String));
    }
  });

  it('initialize → 201 2_initiated with the TXT record to create; a second initialize is refused', async () => {
    const r = await api(tp, 'POST', path('/initialize'), { body: { custom_hostname: HOST.toUpperCase() } });
    expect(r.status).toBe(201);
    expect(r.headers.get('x-ratelimit-limit')).toBe('10');
    expect(r.body.status).toBe('2_initiated');
    expect(r.body.custom_hostname).toBe(HOST);
    const result = r.body.data.result;
    expect(r.body.data).toMatchObject({ success: true, errors: [], messages: [] });
    expect(result).toMatchObject({
      hostname: HOST,
      custom_origin_server: `${ref}.localhost`,
      status: 'pending',
    });
    expect(result.ssl.status).toBe('pending_validation');
    expect(result.ssl.validation_records).toEqual([
      {
        txt_name: `_acme-challenge.${HOST}`,
        txt_value: expect.stringMatching(/^strata-verification=[0-9a-f]{32}$/),
      },
    ]);
    expect(result.ownership_verification).toEqual({
      type: 'txt',
      name: `_acme-challenge.${HOST}`,
      value: result.ssl.validation_records[0].txt_value,
    });

    const again = await api(tp, 'POST', path('/initialize'), {
      body: { custom_hostname: 'other.strata-test.example' },
    });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({
      message:
        'Delete the custom hostname associated with your project before attempting to create a new one.',
    });

    const get = await api(tp, 'GET', path());
    expect(get.status).toBe(200);
    expect(get.headers.get('x-ratelimit-limit')).toBe('120');
    expect(get.body.status).toBe('2_initiated');
  });

  it('activate before verification: 400 "Verification has not been completed."', async () => {
    const r = await api(tp, 'POST', path('/activate'));
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'Verification has not been completed.' });
  });

  it('reverify without the TXT record stays 2_initiated and says what is missing', async () => {
    const r = await api(tp, 'POST', path('/reverify'));
    expect(r.status).toBe(201);
    expect(r.headers.get('x-ratelimit-limit')).toBe('10');
    expect(r.body.status).toBe('2_initiated');
    expect(r.body.data.result.verification_errors[0]).toContain(`_acme-challenge.${HOST}`);
    // a wrong value does not count either
    dns.setTxt(`_acme-challenge.${HOST}`, ['strata-verification=wrong']);
    expect((await api(tp, 'POST', path('/reverify'))).body.status).toBe('2_initiated');
  });

  it('with the TXT record: 3_challenge_verified; activate still refused; then the CNAME: 4_origin_setup_completed', async () => {
    const cfg = (await api(tp, 'GET', path())).body.data.result.ssl.validation_records[0];
    dns.setTxt(cfg.txt_name, [cfg.txt_value]);
    const r3 = await api(tp, 'POST', path('/reverify'));
    expect(r3.status).toBe(201);
    expect(r3.body.status).toBe('3_challenge_verified');
    expect(r3.body.data.result.verification_errors[0]).toContain(`CNAME record pointing to ${ref}.localhost`);
    expect((await api(tp, 'POST', path('/activate'))).body).toEqual({
      message: 'Verification has not been completed.',
    });

    dns.setCname(HOST, `${ref}.localhost.`);
    const r4 = await api(tp, 'POST', path('/reverify'));
    expect(r4.status).toBe(201);
    expect(r4.body.status).toBe('4_origin_setup_completed');
    expect(r4.body.data.result.ssl).toEqual({ status: 'active', validation_records: [] });
    expect(r4.body.data.result.status).toBe('active');
  });

  it('reverify after verification: 400 "Verification has been completed, please proceed to activation."', async () => {
    const r = await api(tp, 'POST', path('/reverify'));
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'Verification has been completed, please proceed to activation.' });
  });

  it('the hostname does not route before activation; after activate (201, 5_services_reconfigured) it reaches the project', async () => {
    const ctx = (await tp.platform.project(ref))!;
    // an unrouted Host does not reach this project
    expect(await graphqlVia(HOST, ctx.anonKey)).not.toBe(200);
    expect(await tp.platform.refForHost(HOST)).toBeUndefined();
    const r = await api(tp, 'POST', path('/activate'));
    expect(r.status).toBe(201);
    expect(r.headers.get('x-ratelimit-limit')).toBe('120');
    expect(r.body.status).toBe('5_services_reconfigured');
    expect(await tp.platform.refForHost(HOST)).toBe(ref);
    expect(await graphqlVia(HOST, ctx.anonKey)).toBe(200);
    expect(await graphqlVia(`${HOST}:${tp.port}`, ctx.serviceRoleKey)).toBe(200);
    expect(await graphqlVia(HOST, 'not-a-key')).toBe(401);
    // the default project's key is refused: the hostname reaches this project, not the default one
    const dflt = await tp.platform.defaultProject();
    expect(await graphqlVia(HOST, dflt.anonKey)).toBe(401);
    // activate again: stays active; reverify and initialize are still refused
    expect((await api(tp, 'POST', path('/activate'))).body.status).toBe('5_services_reconfigured');
    expect((await api(tp, 'POST', path('/reverify'))).body).toEqual({
      message: 'Verification has been completed, please proceed to activation.',
    });
    expect(
      (await api(tp, 'POST', path('/initialize'), { body: { custom_hostname: 'x.strata-test.example' } }))
        .body,
    ).toEqual({
      message:
        'Delete the custom hostname associated with your project before attempting to create a new one.',
    });
  });

  it('another project cannot take an active hostname', async () => {
    const other = await tp.platform.createProject({ name: 'taker', organizationId: 'default-org' });
    const r = await api(tp, 'POST', `/v1/projects/${other.ref}/custom-hostname/initialize`, {
      body: { custom_hostname: HOST },
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'The custom hostname is already in use by another project.' });
  });

  it('DELETE → 200 with an empty body, routing stops, GET says there is no configuration', async () => {
    const r = await api(tp, 'DELETE', path());
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    expect(r.headers.get('content-type')).toBeNull();
    expect(r.headers.get('x-ratelimit-limit')).toBe('10');
    expect((await api(tp, 'GET', path())).body).toEqual({ message: NONE });
    const ctx = (await tp.platform.project(ref))!;
    expect(await tp.platform.refForHost(HOST)).toBeUndefined();
    expect(await graphqlVia(HOST, ctx.anonKey)).not.toBe(200);
  });

  it('a deleted project releases its hostname', async () => {
    const a = await tp.platform.createProject({ name: 'doomed', organizationId: 'default-org' });
    const host = 'released.strata-test.example';
    expect(
      (
        await api(tp, 'POST', `/v1/projects/${a.ref}/custom-hostname/initialize`, {
          body: { custom_hostname: host },
        })
      ).status,
    ).toBe(201);
    await tp.platform.deleteProject(a.ref);
    expect(
      (await tp.platform.pool.query('select 1 from custom_hostnames where project_ref = $1', [a.ref]))
        .rowCount,
    ).toBe(0);
    const b = await tp.platform.createProject({ name: 'heir', organizationId: 'default-org' });
    const r = await api(tp, 'POST', `/v1/projects/${b.ref}/custom-hostname/initialize`, {
      body: { custom_hostname: host },
    });
    expect(r.status).toBe(201);
    expect(r.body.custom_hostname).toBe(host);
  });

  it('initialize, reverify and delete are limited to 10 per minute', async () => {
    const other = await tp.platform.createProject({ name: 'limited', organizationId: 'default-org' });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++)
      statuses.push((await api(tp, 'POST', `/v1/projects/${other.ref}/custom-hostname/reverify`)).status);
    expect(statuses.slice(0, 10).every((s) => s === 400)).toBe(true);
    expect(statuses[10]).toBe(429);
  });
});

describe('custom hostname through supabase-management-js v2', () => {
  it('updateHostnameConfig → verifyDnsConfig → activateCustomHostname → getHostnameConfig → deleteHostnameConfig', async () => {
    const host = 'sdk.strata-test.example';
    const init = await client.updateHostnameConfig(ref, { custom_hostname: host });
    expect(init.status).toBe(201);
    expect(init.data.status).toBe('2_initiated');
    const rec = init.data.data.result.ssl.validation_records[0]!;
    dns.setTxt(rec.txt_name, [rec.txt_value]);
    dns.setCname(host, `${ref}.localhost`);
    const verified = await client.verifyDnsConfig(ref);
    expect(verified.status).toBe(201);
    expect(verified.data.status).toBe('4_origin_setup_completed');
    const active = await client.activateCustomHostname(ref);
    expect(active.status).toBe(201);
    expect(active.data.status).toBe('5_services_reconfigured');
    expect((await client.getHostnameConfig(ref)).data.custom_hostname).toBe(host);
    expect((await client.deleteHostnameConfig(ref)).status).toBe(200);
    await expect(client.getHostnameConfig(ref)).rejects.toThrow(NONE);
  });
});
