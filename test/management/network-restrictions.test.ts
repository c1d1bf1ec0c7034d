/**
 * GET network-restrictions / POST network-restrictions/apply. On a server the platform does not run (the run's shared
 * server, given as DATABASE_URL) apply stores the config; on the platform's own embedded server it
 * rewrites pg_hba.conf and reloads PostgreSQL, so a restricted CIDR refuses direct connections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { SupabaseManagementAPI } from 'supabase-management-js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api } from '../support/management.js';
import { withClient } from '../../src/db/pool.js';
import { renderManagedBlock, withManagedBlock, BEGIN_MARK } from '../../src/platform/pg-hba.js';
import { graphqlUrl, postGraphQL } from '../support/graphql.js';

const OPEN = { dbAllowedCidrs: ['0.0.0.0/0'], dbAllowedCidrsV6: ['::/0'] };

describe('pg_hba.conf rendering', () => {
  const initdb = 'local all all scram-sha-256\nhost all all 127.0.0.1/32 scram-sha-256\n';

  it('puts one managed block first, replaces it on every render, and keeps the rest of the file', () => {
    const block1 = renderManagedBlock([{ ref: 'a'.repeat(20), dbName: 'db_a', v4: ['10.0.0.0/8'], v6: [] }]);
    const once = withManagedBlock(initdb, block1);
    expect(once.startsWith(BEGIN_MARK)).toBe(true);
    expect(once.endsWith(initdb)).toBe(true);
    expect(once).toMatch(/host\s+"db_a"\s+all\s+10\.0\.0\.0\/8\s+scram-sha-256/);
    expect(once).toMatch(/host\s+"db_a"\s+all\s+0\.0\.0\.0\/0\s+reject/);
    expect(once).not.toMatch(/"db_a"\s+all\s+::\/0\s+reject/); // IPv6 left open
    const block2 = renderManagedBlock([]);
    const twice = withManagedBlock(once, block2);
    expect(twice).toBe(block2 + initdb);
    expect(twice.split(BEGIN_MARK)).toHaveLength(2);
  });

  it('the platform host comes before any reject line; open lists write nothing for the database', () => {
    const text = renderManagedBlock([
      { ref: 'b'.repeat(20), dbName: 'db_b', v4: ['0.0.0.0/0'], v6: ['::/0'] },
      { ref: 'c'.repeat(20), dbName: 'db_c', v4: [], v6: ['2001:db8::/32'] },
    ]);
    expect(text).not.toContain('"db_b"');
    expect(text.indexOf('127.0.0.1/32')).toBeLessThan(text.indexOf('reject'));
    expect(text).toMatch(/"db_c"\s+all\s+::\/0\s+reject/);
    expect(() =>
      renderManagedBlock([{ ref: 'd'.repeat(20), dbName: 'bad"name', v4: ['10.0.0.0/8'], v6: [] }]),
    ).toThrow();
  });
});

describe('network restrictions on a server the platform does not manage (DATABASE_URL)', () => {
  let tp: TestPlatform;
  let ref: string;
  beforeAll(async () => {
    tp = await startTestPlatform();
    ref = tp.platform.defaultRef;
  });
  afterAll(async () => {
    await tp?.close();
  });

  it('a never-configured project reports the open config as applied', async () => {
    const r = await api(tp, 'GET', `/v1/projects/${ref}/network-restrictions`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ entitlement: 'allowed', config: OPEN, status: 'applied' });
  });

  it('apply validates the CIDRs (400)', async () => {
    for (const bad of [
      { dbAllowedCidrs: ['10.0.0.0/33'] },
      { dbAllowedCidrs: ['not-a-cidr'] },
      { dbAllowedCidrs: ['10.0.0.1'] },
      { dbAllowedCidrs: ['2001:db8::/32'] },
      { dbAllowedCidrsV6: ['10.0.0.0/8'] },
      { dbAllowedCidrs: '10.0.0.0/8' },
      { dbAllowedCidrs: [42] },
      [],
    ]) {
      const r = await api(tp, 'POST', `/v1/projects/${ref}/network-restrictions/apply`, { body: bad });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.message).toEqual(expect.any(String));
    }
  });

  it('apply answers 201 `stored` and says why; GET shows the stored config', async () => {
    const r = await api(tp, 'POST', `/v1/projects/${ref}/network-restrictions/apply`, {
      body: { dbAllowedCidrs: ['203.0.113.7/24'], dbAllowedCidrsV6: ['2001:db8::1/32'] },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      entitlement: 'allowed',
      config: { dbAllowedCidrs: ['203.0.113.0/24'], dbAllowedCidrsV6: ['2001:db8::/32'] },
      status: 'stored',
      updated_at: expect.any(String),
      detail: expect.stringContaining('not run by the platform'),
    });
    expect(r.body.applied_at).toBeUndefined();
    const g = await api(tp, 'GET', `/v1/projects/${ref}/network-restrictions`);
    expect(g.body).toEqual(r.body);
  });

  it('through supabase-management-js v2: getNetworkRestrictions / updateNetworkRestrictions', async () => {
    const client = new SupabaseManagementAPI({
      accessToken: tp.platform.defaultAccessToken,
      baseUrl: tp.url,
    });
    const up = await client.updateNetworkRestrictions(ref, {
      dbAllowedCidrs: ['198.51.100.0/24'],
      dbAllowedCidrsV6: [],
    });
    expect(up.status).toBe(201);
    expect(up.data.status).toBe('stored');
    const got = await client.getNetworkRestrictions(ref);
    expect(got.status).toBe(200);
    expect(got.data.config).toEqual({ dbAllowedCidrs: ['198.51.100.0/24'], dbAllowedCidrsV6: [] });
    await expect(client.updateNetworkRestrictions(ref, { dbAllowedCidrs: ['nope'] })).rejects.toThrow(
      /Invalid IPv4 CIDR/,
    );
  });
});

describe('network restrictions on the platform’s own embedded server', () => {
  let tp: TestPlatform;
  let ref: string;
  let dbName: string;
  let superuserUrl: string;
  beforeAll(async () => {
    tp = await startTestPlatform({ databaseUrl: undefined, dbPort: 0 });
    const p = await tp.platform.createProject({ name: 'restricted', organizationId: 'default-org' });
    ref = p.ref;
    dbName = p.dbName;
    superuserUrl = p.superuserUrl;
  });
  afterAll(async () => {
    await tp?.close();
  });

  /** Connects to `database` as the superuser from `localAddress`; resolves 'ok' or the server's refusal. */
  async function connectFrom(localAddress: string, database: string): Promise<string> {
    const u = new URL(superuserUrl);
    const client = new pg.Client({
      host: u.hostname,
      port: Number(u.port),
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      database,
      stream: () => {
        const s = new Socket();
        const connect = s.connect.bind(s) as (o: object) => Socket;
        (s as unknown as { connect: (port: number, host: string) => Socket }).connect = (
          port: number,
          host: string,
        ) => connect({ port, host, localAddress });
        return s;
      },
    });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('select 1');
      return 'ok';
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    } finally {
      await client.end().catch(() => {});
    }
  }

  const hbaFile = () =>
    withClient(
      superuserUrl,
      async (c) => (await c.query<{ f: string }>(`select current_setting('hba_file') as f`)).rows[0]!.f,
    );

  const apply = (target: string, body: unknown) =>
    api(tp, 'POST', `/v1/projects/${target}/network-restrictions/apply`, { body });

  it('at start the platform opens its own server to every address (nothing restricted yet)', async () => {
    expect(tp.platform.servers.primary.managed).toBe(true);
    expect(readFileSync(await hbaFile(), 'utf8')).toContain('# BEGIN STRATA NETWORK RESTRICTIONS');
    expect(await connectFrom('127.0.0.2', dbName)).toBe('ok');
    expect((await api(tp, 'GET', `/v1/projects/${ref}/network-restrictions`)).body).toEqual({
      entitlement: 'allowed',
      config: OPEN,
      status: 'applied',
    });
  });

  it('a restricted CIDR refuses direct connections from other addresses, for that database only', async () => {
    const r = await apply(ref, { dbAllowedCidrs: ['127.0.0.3/32'], dbAllowedCidrsV6: [] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      entitlement: 'allowed',
      config: { dbAllowedCidrs: ['127.0.0.3/32'], dbAllowedCidrsV6: [] },
      status: 'applied',
      applied_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(r.body.old_config).toBeUndefined();
    expect(r.body.detail).toBeUndefined();
    expect(await connectFrom('127.0.0.2', dbName)).toMatch(
      /pg_hba\.conf rejects connection for host "127\.0\.0\.2"/,
    );
    expect(await connectFrom('127.0.0.3', dbName)).toBe('ok');
    // the platform itself (127.0.0.1) keeps working, and other databases stay open
    expect(await connectFrom('127.0.0.1', dbName)).toBe('ok');
    const dflt = await tp.platform.defaultProject();
    expect(await connectFrom('127.0.0.2', dflt.dbName)).toBe('ok');
    const hba = readFileSync(await hbaFile(), 'utf8');
    expect(hba).toContain(`"${dbName}"`);
  });

  it("the project's APIs keep working (the API pool connects from 127.0.0.1)", async () => {
    await tp.platform.forget(ref); // new pool, new connections
    const p = (await tp.platform.project(ref))!;
    const res = await postGraphQL(graphqlUrl(tp, ref), { query: '{ __typename }' }, { apikey: p.anonKey });
    expect(res.status).toBe(200);
  });

  it('re-applying with the address allowed lets it in', async () => {
    const r = await apply(ref, {
      dbAllowedCidrs: ['127.0.0.3/32', '127.0.0.2/32'],
      dbAllowedCidrsV6: ['::1/128'],
    });
    expect(r.body.status).toBe('applied');
    expect(await connectFrom('127.0.0.2', dbName)).toBe('ok');
    expect(await connectFrom('127.0.0.4', dbName)).toMatch(/rejects connection/);
  });

  it('while a new config cannot be applied it stays `stored` and old_config shows the applied one', async () => {
    // Make applying fail: another project's applied rule names a database pg_hba.conf cannot express.
    const other = await tp.platform.createProject({ name: 'other', organizationId: 'default-org' });
    expect((await apply(other.ref, { dbAllowedCidrs: ['127.0.0.9/32'] })).body.status).toBe('applied');
    await tp.platform.pool.query(`update projects set db_name = 'bad"name' where ref = $1`, [other.ref]);
    const r = await apply(ref, { dbAllowedCidrs: ['127.0.0.5/32'] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      status: 'stored',
      config: { dbAllowedCidrs: ['127.0.0.5/32'], dbAllowedCidrsV6: [] },
      old_config: { dbAllowedCidrs: ['127.0.0.3/32', '127.0.0.2/32'], dbAllowedCidrsV6: ['::1/128'] },
      detail: expect.stringContaining('Applying failed'),
    });
    expect(await connectFrom('127.0.0.2', dbName)).toBe('ok'); // the previous rules still hold
    await tp.platform.pool.query(`update projects set db_name = $2 where ref = $1`, [
      other.ref,
      other.dbName,
    ]);
    const fixed = await apply(ref, { dbAllowedCidrs: ['127.0.0.5/32'] });
    expect(fixed.body.status).toBe('applied');
    expect(fixed.body.old_config).toBeUndefined();
    expect(await connectFrom('127.0.0.2', dbName)).toMatch(/rejects connection/);
    expect(await connectFrom('127.0.0.5', dbName)).toBe('ok');
    expect(await connectFrom('127.0.0.2', other.dbName)).toMatch(/rejects connection/);
  });

  it('PATCH (the CLI --append path) adds and removes CIDRs and applies them; V2 answer shape', async () => {
    const client = new SupabaseManagementAPI({
      accessToken: tp.platform.defaultAccessToken,
      baseUrl: tp.url,
    });
    const r = await client.patchNetworkRestrictions(ref, { add: { dbAllowedCidrs: ['127.0.0.2/32'] } });
    expect(r.status).toBe(200);
    expect(r.data).toMatchObject({
      entitlement: 'allowed',
      status: 'applied',
      config: {
        dbAllowedCidrs: [
          { address: '127.0.0.5/32', type: 'v4' },
          { address: '127.0.0.2/32', type: 'v4' },
        ],
      },
    });
    expect(await connectFrom('127.0.0.2', dbName)).toBe('ok');
    const r2 = await api(tp, 'PATCH', `/v1/projects/${ref}/network-restrictions`, {
      body: { remove: { dbAllowedCidrs: ['127.0.0.2/32'] } },
    });
    expect(r2.status).toBe(200);
    expect(r2.body.config.dbAllowedCidrs).toEqual([{ address: '127.0.0.5/32', type: 'v4' }]);
    expect(await connectFrom('127.0.0.2', dbName)).toMatch(/rejects connection/);
    expect(
      (
        await api(tp, 'PATCH', `/v1/projects/${ref}/network-restrictions`, {
          body: { add: { dbAllowedCidrs: ['bad'] } },
        })
      ).status,
    ).toBe(400);
  });

  it('0.0.0.0/0 opens the database again', async () => {
    const r = await apply(ref, OPEN);
    expect(r.body).toMatchObject({ status: 'applied', config: OPEN });
    expect(await connectFrom('127.0.0.2', dbName)).toBe('ok');
    // No restriction line for the database any more (its project logins keep their own lines).
    expect(readFileSync(await hbaFile(), 'utf8')).not.toMatch(new RegExp(`"${dbName}"\\s+all\\s`));
  });
});
