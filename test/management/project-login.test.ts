/**
 * Each project's own database login `postgres.<ref>` (password = `db_pass`), reached with node-postgres:
 * directly on the run's server (CONNECT grants keep it in its own database) and, on an embedded server
 * the platform runs, through pg_hba.conf and the platform's PostgreSQL router (the pooler address).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import net from 'node:net';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api } from '../support/management.js';
import { withDatabase } from '../../src/db/pool.js';

function loginUrl(serverUrl: string, ref: string, password: string, db: string): string {
  const u = new URL(withDatabase(serverUrl, db));
  u.username = encodeURIComponent(`postgres.${ref}`);
  u.password = encodeURIComponent(password);
  return u.toString();
}

/** Connects (from `localAddress` when given: 127.0.0.1 itself is never banned). */
async function tryConnect(
  url: string,
  localAddress?: string,
): Promise<{ ok: true; client: pg.Client } | { ok: false; code?: string; message: string }> {
  const stream = localAddress
    ? () => {
        const s = new net.Socket();
        const connect = s.connect.bind(s) as (o: net.TcpNetConnectOpts) => net.Socket;
        (s as unknown as { connect: (port: number, host: string) => net.Socket }).connect = (port, host) =>
          connect({ port, host, localAddress });
        return s;
      }
    : undefined;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000, stream });
  client.on('error', () => {});
  try {
    await client.connect();
    return { ok: true, client };
  } catch (err) {
    await client.end().catch(() => {});
    const e = err as { code?: string; message: string };
    return { ok: false, code: e.code, message: e.message };
  }
}

async function createProject(tp: TestPlatform, name: string, dbPass: string) {
  const r = await api(tp, 'POST', '/v1/projects', {
    body: { name, organization_slug: 'default-org', db_pass: dbPass },
  });
  expect(r.status, r.text).toBe(201);
  const ctx = await tp.platform.project(r.body.ref);
  if (!ctx) throw new Error('project not loaded');
  return {
    ref: r.body.ref as string,
    dbName: ctx.dbName,
    serverUrl: tp.platform.servers.get(ctx.dbServer).url,
  };
}

describe('project login on a shared server (CONNECT grants)', () => {
  let tp: TestPlatform;
  let a: Awaited<ReturnType<typeof createProject>>;
  let b: Awaited<ReturnType<typeof createProject>>;
  beforeAll(async () => {
    tp = await startTestPlatform();
    a = await createProject(tp, 'login-a', 'pass-of-a-1');
    b = await createProject(tp, 'login-b', 'pass-of-b-2');
  });
  afterAll(async () => {
    await tp?.close();
  });

  it('db_pass with control characters or an empty one is refused', async () => {
    for (const db_pass of ['bad\u0000pass', 'bad\npass', '']) {
      const r = await api(tp, 'POST', '/v1/projects', {
        body: { name: 'x', organization_slug: 'default-org', db_pass },
      });
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(/db_pass/);
    }
  });

  it('logs in to its own database with db_pass, owns public, and is a member of the API roles', async () => {
    const c = await tryConnect(loginUrl(a.serverUrl, a.ref, 'pass-of-a-1', a.dbName));
    expect(c.ok).toBe(true);
    if (!c.ok) return;
    try {
      const who = await c.client.query('select current_user as u, current_database() as d');
      expect(who.rows[0]).toEqual({ u: `postgres.${a.ref}`, d: a.dbName });
      await c.client.query('create table public.login_owned (id int primary key)');
      await c.client.query('create schema if not exists supabase_migrations');
      const owner = await c.client.query(
        `select pg_get_userbyid(nspowner) as o from pg_namespace where nspname = 'public'`,
      );
      expect(owner.rows[0].o).toBe(`postgres.${a.ref}`);
      // Tables it creates are usable by the API roles (default privileges, as on the hosted platform).
      const acl = await c.client.query(
        `select has_table_privilege('anon', 'public.login_owned', 'select') as anon,
                has_table_privilege('service_role', 'public.login_owned', 'delete') as service`,
      );
      expect(acl.rows[0]).toEqual({ anon: true, service: true });
      const member = await c.client.query(
        `select count(*)::int as n, bool_or(set_option) as s from pg_auth_members
          where member = (select oid from pg_roles where rolname = current_user) and roleid in ('anon'::regrole, 'authenticated'::regrole, 'service_role'::regrole)`,
      );
      // Membership without SET needs PostgreSQL 16+; older servers give no membership at all.
      const v = Number((await c.client.query('show server_version_num')).rows[0].server_version_num);
      expect(member.rows[0]).toEqual(v >= 160000 ? { n: 3, s: false } : { n: 0, s: null });
      // Not a superuser.
      const su = await c.client.query(`select rolsuper from pg_roles where rolname = current_user`);
      expect(su.rows[0].rolsuper).toBe(false);
    } finally {
      await c.client.end();
    }
  });

  it('cannot change the cluster-wide API roles it is a member of', async () => {
    const c = await tryConnect(loginUrl(a.serverUrl, a.ref, 'pass-of-a-1', a.dbName));
    expect(c.ok).toBe(true);
    if (!c.ok) return;
    try {
      // The API roles are shared by every project on the server: SET ROLE to them (after which
      // `alter role anon set …` would be allowed) is refused.
      for (const role of ['anon', 'authenticated', 'service_role']) {
        const r = await c.client.query(`set role ${role}`).then(
          () => 'switched',
          (e: { code?: string }) => e.code,
        );
        expect(r, role).toBe('42501');
        const alter = await c.client.query(`alter role ${role} set statement_timeout = 0`).then(
          () => 'altered',
          (e: { code?: string }) => e.code,
        );
        expect(alter, role).toBe('42501');
      }
      const own = await c.client.query(`alter role authenticator set statement_timeout = 0`).then(
        () => 'altered',
        (e: { code?: string }) => e.code,
      );
      expect(own).toBe('42501');
    } finally {
      await c.client.end();
    }
  });

  it("is refused in another project's database and in the platform database", async () => {
    const other = await tryConnect(loginUrl(b.serverUrl, a.ref, 'pass-of-a-1', b.dbName));
    expect(other.ok).toBe(false);
    if (!other.ok) expect(other.code).toBe('42501');
    const platformDb = tp.platform.platformDatabase;
    const meta = await tryConnect(loginUrl(a.serverUrl, a.ref, 'pass-of-a-1', platformDb));
    expect(meta.ok).toBe(false);
    if (!meta.ok) expect(meta.code).toBe('42501');
  });

  it('a wrong password is PostgreSQL’s own authentication error', async () => {
    const r = await tryConnect(loginUrl(a.serverUrl, a.ref, 'not-the-password', a.dbName));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.code).toBe('28P01');
  });

  it('PATCH /database/password changes it', async () => {
    const bad = await api(tp, 'PATCH', `/v1/projects/${b.ref}/database/password`, {
      body: { password: 'abc' },
    });
    expect(bad.status).toBe(400);
    const nul = await api(tp, 'PATCH', `/v1/projects/${b.ref}/database/password`, {
      body: { password: 'abc\u0000def' },
    });
    expect(nul.status).toBe(400);
    const r = await api(tp, 'PATCH', `/v1/projects/${b.ref}/database/password`, {
      body: { password: 'new-pass-of-b' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ message: expect.any(String) });
    const old = await tryConnect(loginUrl(b.serverUrl, b.ref, 'pass-of-b-2', b.dbName));
    expect(old.ok).toBe(false);
    const fresh = await tryConnect(loginUrl(b.serverUrl, b.ref, 'new-pass-of-b', b.dbName));
    expect(fresh.ok).toBe(true);
    if (fresh.ok) await fresh.client.end();
  });

  it('deleting the project drops its logins', async () => {
    const c = await createProject(tp, 'login-c', 'pass-of-c-3');
    const del = await api(tp, 'DELETE', `/v1/projects/${c.ref}`);
    expect(del.status).toBe(200);
    const roles = await tp.platform.pool.query('select rolname from pg_roles where rolname like $1', [
      `%.${c.ref}`,
    ]);
    expect(roles.rows).toEqual([]);
  });
});

describe('project login on the embedded server: pg_hba.conf and the pooler address', () => {
  let tp: TestPlatform;
  let a: Awaited<ReturnType<typeof createProject>>;
  let b: Awaited<ReturnType<typeof createProject>>;
  const poolerHost = `127.${10 + Math.floor(Math.random() * 200)}.${1 + Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
  beforeAll(async () => {
    tp = await startTestPlatform({
      databaseUrl: undefined,
      dbPort: 0,
      poolerHost,
      poolerPort: 0,
      banThreshold: 2,
    });
    a = await createProject(tp, 'hba-a', 'pass-of-a-1');
    b = await createProject(tp, 'hba-b', 'pass-of-b-2');
  }, 120_000);
  afterAll(async () => {
    await tp?.close();
  });

  it("pg_hba.conf rejects a project login in another project's database", async () => {
    const own = await tryConnect(loginUrl(a.serverUrl, a.ref, 'pass-of-a-1', a.dbName));
    expect(own.ok).toBe(true);
    if (own.ok) await own.client.end();
    const other = await tryConnect(loginUrl(a.serverUrl, a.ref, 'pass-of-a-1', b.dbName));
    expect(other.ok).toBe(false);
    if (!other.ok) {
      expect(other.code).toBe('28000');
      expect(other.message).toMatch(/pg_hba\.conf rejects connection/);
    }
    const postgresDb = await tryConnect(loginUrl(a.serverUrl, a.ref, 'pass-of-a-1', 'postgres'));
    expect(postgresDb.ok).toBe(false);
  });

  it('the pooler address routes postgres.<ref> to its database whatever database name is asked', async () => {
    const pooler = tp.platform.pooler ?? { host: '', port: 0 };
    expect(pooler.host).toBe(poolerHost);
    const url = `postgresql://postgres.${a.ref}:pass-of-a-1@${poolerHost}:${pooler.port}/postgres`;
    const c = await tryConnect(url);
    expect(c.ok).toBe(true);
    if (!c.ok) return;
    try {
      const r = await c.client.query('select current_user as u, current_database() as d');
      expect(r.rows[0]).toEqual({ u: `postgres.${a.ref}`, d: a.dbName });
    } finally {
      await c.client.end();
    }
    const unknown = await tryConnect(
      `postgresql://postgres.${'z'.repeat(20)}:x@${poolerHost}:${pooler.port}/postgres`,
    );
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) expect(unknown.message).toBe('Tenant or user not found');
    const plain = await tryConnect(`postgresql://postgres:x@${poolerHost}:${pooler.port}/postgres`);
    expect(plain.ok).toBe(false);
    const internal = await tryConnect(
      `postgresql://strata_sql.${a.ref}:x@${poolerHost}:${pooler.port}/postgres`,
    );
    expect(internal.ok).toBe(false);
    if (!internal.ok) expect(internal.message).toBe('Tenant or user not found');
  });

  it('wrong passwords through the pooler count towards a network ban', async () => {
    const pooler = tp.platform.pooler ?? { host: '', port: 0 };
    // The client connects from the pooler's own (non-127.0.0.1) loopback address, which is bannable.
    const url = `postgresql://postgres.${b.ref}:wrong@${poolerHost}:${pooler.port}/postgres`;
    for (let i = 0; i < 2; i++) {
      const r = await tryConnect(url, poolerHost);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.code).toBe('28P01');
    }
    const bans = await api(tp, 'POST', `/v1/projects/${b.ref}/network-bans/retrieve`);
    expect(bans.body.banned_ipv4_addresses).toEqual([poolerHost]);
    const good = await tryConnect(
      `postgresql://postgres.${b.ref}:pass-of-b-2@${poolerHost}:${pooler.port}/postgres`,
      poolerHost,
    );
    expect(good.ok).toBe(false);
    if (!good.ok) expect(good.message).toMatch(/banned/);
    await api(tp, 'DELETE', `/v1/projects/${b.ref}/network-bans`, { body: { ipv4_addresses: [poolerHost] } });
    const again = await tryConnect(
      `postgresql://postgres.${b.ref}:pass-of-b-2@${poolerHost}:${pooler.port}/postgres`,
      poolerHost,
    );
    expect(again.ok).toBe(true);
    if (again.ok) await again.client.end();
  });

  it('garbage on the pooler port is closed without harm', async () => {
    const pooler = tp.platform.pooler ?? { host: '', port: 0 };
    await new Promise<void>((resolve) => {
      const s = net.connect(pooler.port, poolerHost, () =>
        s.write(Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4])),
      );
      s.on('close', () => resolve());
      s.on('error', () => resolve());
    });
    const c = await tryConnect(
      `postgresql://postgres.${a.ref}:pass-of-a-1@${poolerHost}:${pooler.port}/postgres`,
    );
    expect(c.ok).toBe(true);
    if (c.ok) await c.client.end();
  });
});
