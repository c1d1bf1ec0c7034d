/**
 * POST network-bans/retrieve / DELETE network-bans: the gateway bans a client IP on a project after repeated failed
 * authentications (banThreshold within banWindowMs) and answers 403 until the ban is lifted.
 * Clients use other loopback source addresses (127.0.0.2, 127.0.0.3, ...).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { SupabaseManagementAPI } from 'supabase-management-js';
import { startSecondProcess, startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api } from '../support/management.js';
import type { ProjectContext } from '../../src/platform/project-context.js';

const THRESHOLD = 3;

let tp: TestPlatform;
let ref: string;
let ctx: ProjectContext;
beforeAll(async () => {
  tp = await startTestPlatform({ banThreshold: THRESHOLD, banWindowMs: 60_000 });
  ref = tp.platform.defaultRef;
  ctx = await tp.platform.defaultProject();
});
afterAll(async () => {
  await tp?.close();
});

interface Answer {
  status: number;
  body: string;
}

/** An HTTP request from a chosen local (source) address. */
function from(
  localAddress: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string | number> = { ...headers };
    if (body !== undefined) h['content-length'] = Buffer.byteLength(body);
    const req = request(
      { host: '127.0.0.1', port: tp.port, localAddress, method, path, headers: h },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const gql = (ip: string, apikey: string, prefix = '') =>
  from(
    ip,
    'POST',
    `${prefix}/graphql/v1`,
    { apikey, 'content-type': 'application/json' },
    JSON.stringify({ query: '{ __typename }' }),
  );

const retrieve = async () =>
  (await api(tp, 'POST', `/v1/projects/${ref}/network-bans/retrieve`)).body.banned_ipv4_addresses as string[];

describe('network bans', () => {
  it('retrieve answers 201 with an empty list at first', async () => {
    const r = await api(tp, 'POST', `/v1/projects/${ref}/network-bans/retrieve`);
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ banned_ipv4_addresses: [] });
  });

  it(`${THRESHOLD} failed authentications ban the address: even a valid key then gets 403`, async () => {
    expect((await gql('127.0.0.2', ctx.anonKey)).status).toBe(200);
    for (let i = 0; i < THRESHOLD; i++) expect((await gql('127.0.0.2', 'wrong-key')).status).toBe(401);
    const banned = await gql('127.0.0.2', ctx.anonKey);
    expect(banned.status).toBe(403);
    expect(JSON.parse(banned.body)).toEqual({ message: expect.stringContaining('banned') });
    expect(await retrieve()).toEqual(['127.0.0.2']);
  });

  it('other addresses and other projects are not affected', async () => {
    expect((await gql('127.0.0.3', ctx.anonKey)).status).toBe(200);
    const other = await tp.platform.createProject({ name: 'unbanned', organizationId: 'default-org' });
    expect((await gql('127.0.0.2', other.anonKey, `/project/${other.ref}`)).status).toBe(200);
  });

  it('failures below the threshold do not ban; the platform host (127.0.0.1) is never banned', async () => {
    for (let i = 0; i < THRESHOLD - 1; i++) expect((await gql('127.0.0.4', 'wrong')).status).toBe(401);
    expect((await gql('127.0.0.4', ctx.anonKey)).status).toBe(200);
    for (let i = 0; i < THRESHOLD + 2; i++) expect((await gql('127.0.0.1', 'wrong')).status).toBe(401);
    expect((await gql('127.0.0.1', ctx.anonKey)).status).toBe(200);
    expect(await retrieve()).toEqual(['127.0.0.2']);
  });

  it('DELETE validates its body', async () => {
    for (const bad of [
      undefined,
      {},
      { ipv4_addresses: 'x' },
      { ipv4_addresses: ['not-an-ip'] },
      { ipv4_addresses: ['10.0.0.300'] },
      { ipv4_addresses: [], requester_ip: 'yes' },
    ]) {
      const r = await api(tp, 'DELETE', `/v1/projects/${ref}/network-bans`, { body: bad });
      expect(r.status, JSON.stringify(bad)).toBe(400);
    }
  });

  it('DELETE with ipv4_addresses lifts the ban: 200 with an empty body, the address is allowed again', async () => {
    const r = await api(tp, 'DELETE', `/v1/projects/${ref}/network-bans`, {
      body: { ipv4_addresses: ['127.0.0.2'] },
    });
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    expect(await retrieve()).toEqual([]);
    expect((await gql('127.0.0.2', ctx.anonKey)).status).toBe(200);
    // the failure count starts over
    for (let i = 0; i < THRESHOLD - 1; i++) await gql('127.0.0.2', 'wrong');
    expect((await gql('127.0.0.2', ctx.anonKey)).status).toBe(200);
  });

  it('requester_ip: true lifts the ban of the caller’s own address', async () => {
    for (let i = 0; i < THRESHOLD; i++) await gql('127.0.0.5', 'wrong');
    expect((await gql('127.0.0.5', ctx.anonKey)).status).toBe(403);
    const r = await from(
      '127.0.0.5',
      'DELETE',
      `/v1/projects/${ref}/network-bans`,
      { authorization: `Bearer ${tp.platform.defaultAccessToken}`, 'content-type': 'application/json' },
      JSON.stringify({ ipv4_addresses: [], requester_ip: true }),
    );
    expect(r.status).toBe(200);
    expect((await gql('127.0.0.5', ctx.anonKey)).status).toBe(200);
  });

  it('the state lives in the platform database: a ban written by another process is enforced', async () => {
    await tp.platform.pool.query(`insert into network_bans (project_ref, ip) values ($1, '127.0.0.6')`, [
      ref,
    ]);
    await new Promise((r) => setTimeout(r, 1_100)); // the per-process cache lives about a second
    expect((await gql('127.0.0.6', ctx.anonKey)).status).toBe(403);
    expect(await retrieve()).toEqual(['127.0.0.6']);
  });

  it('a second API process on the same platform database enforces the ban made by the first, and sees it lifted', async () => {
    const second = await startSecondProcess(tp);
    try {
      const gql2 = (ip: string, apikey: string) =>
        new Promise<number>((resolve, reject) => {
          const body = JSON.stringify({ query: '{ __typename }' });
          const req = request(
            {
              host: '127.0.0.1',
              port: second.port,
              localAddress: ip,
              method: 'POST',
              path: '/graphql/v1',
              headers: {
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
      expect(second.platform.defaultRef).toBe(ref);
      expect(await gql2('127.0.0.8', ctx.anonKey)).toBe(200);
      for (let i = 0; i < THRESHOLD; i++) expect((await gql('127.0.0.8', 'wrong')).status).toBe(401); // failures on the first process
      await new Promise((res) => setTimeout(res, 1_100)); // the second process caches its ban list for about a second
      expect(await gql2('127.0.0.8', ctx.anonKey)).toBe(403); // refused by the second
      const r = await from(
        '127.0.0.1',
        'DELETE',
        `/v1/projects/${ref}/network-bans`,
        { authorization: `Bearer ${tp.platform.defaultAccessToken}`, 'content-type': 'application/json' },
        JSON.stringify({ ipv4_addresses: ['127.0.0.8'] }),
      );
      expect(r.status).toBe(200);
      await new Promise((res) => setTimeout(res, 1_100)); // the second process's cache
      expect(await gql2('127.0.0.8', ctx.anonKey)).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('through supabase-management-js v2: listAllNetworkBans (201) and deleteNetworkBans (200)', async () => {
    const client = new SupabaseManagementAPI({
      accessToken: tp.platform.defaultAccessToken,
      baseUrl: tp.url,
    });
    const list = await client.listAllNetworkBans(ref);
    expect(list.status).toBe(201);
    expect(list.data).toEqual({ banned_ipv4_addresses: ['127.0.0.6'] });
    const del = await client.deleteNetworkBans(ref, { ipv4_addresses: ['127.0.0.6'] });
    expect(del.status).toBe(200);
    expect((await client.listAllNetworkBans(ref)).data).toEqual({ banned_ipv4_addresses: [] });
    expect((await gql('127.0.0.6', ctx.anonKey)).status).toBe(200);
  });

  it('failed authentications on Storage count too', async () => {
    const probe = await from('127.0.0.7', 'GET', '/storage/v1/bucket', {
      apikey: ctx.anonKey,
      authorization: 'Bearer not-a-jwt',
    });
    const authFailure =
      probe.status === 401 ||
      (probe.status === 400 &&
        /"statusCode":"403"/.test(probe.body) &&
        /"error":"Unauthorized"/.test(probe.body));
    expect(authFailure, `storage answered ${probe.status} ${probe.body}`).toBe(true);
    for (let i = 1; i < THRESHOLD; i++)
      await from('127.0.0.7', 'GET', '/storage/v1/bucket', {
        apikey: ctx.anonKey,
        authorization: 'Bearer not-a-jwt',
      });
    expect((await gql('127.0.0.7', ctx.anonKey)).status).toBe(403);
    const storage = await from('127.0.0.7', 'GET', '/storage/v1/bucket', {
      apikey: ctx.anonKey,
      authorization: `Bearer ${ctx.anonKey}`,
    });
    expect(storage.status).toBe(403);
    expect(JSON.parse(storage.body)).toMatchObject({ statusCode: '403', code: 'AccessDenied' });
  });
});
