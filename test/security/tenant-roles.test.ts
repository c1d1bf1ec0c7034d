/**
 * One role model for a tenant's database (issue 29 item 6): every door — the banner's / `strata
 * status` DB URL, `POST …/database/query` (console SQL editor, migrations), the pooler — logs in as
 * the project's login `postgres.<ref>` (the hosted platform's `postgres`): not a superuser, owner of
 * what it creates and of storage's tables (so it can write Storage policies), confined to its own
 * database. See docs/security/roles.md.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDatabase } from '../../src/db/pool.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api } from '../support/management.js';

let tp: TestPlatform;
let ref: string;
let dbUrl: string;
// The pooler on a loopback address of its own (port 5432 of 127.0.0.1 is shared by every test file).
const poolerHost = `127.${10 + Math.floor(Math.random() * 200)}.${1 + Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

beforeAll(async () => {
  tp = await startTestPlatform({ poolerHost, poolerPort: 0 });
  ref = tp.platform.defaultRef;
  dbUrl = await tp.platform.defaultProjectDbUrl();
}, 60_000);

afterAll(async () => {
  await tp?.close();
});

async function withConnection<T>(url: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await work(c);
  } finally {
    await c.end();
  }
}

async function refused(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  c.on('error', () => {});
  try {
    await c.connect();
    await c.end();
    return false;
  } catch {
    return true;
  }
}

const query = async (q: string) => {
  const r = await api(tp, 'POST', `/v1/projects/${ref}/database/query`, { body: { query: q } });
  expect(r.status, r.text).toBe(201);
  return r.body as Record<string, unknown>[];
};

function poolerUrl(): string {
  const u = new URL(dbUrl);
  u.hostname = poolerHost;
  u.port = String(tp.platform.pooler?.port);
  return u.toString();
}

describe('the tenant admin role, the same at every door', () => {
  it("the DB URL logs in as the project's login, not a superuser", async () => {
    expect(decodeURIComponent(new URL(dbUrl).username)).toBe(`postgres.${ref}`);
    const me = await withConnection(dbUrl, (c) =>
      c.query<{ u: string; su: boolean }>(
        'select current_user as u, rolsuper as su from pg_roles where rolname = current_user',
      ),
    );
    expect(me.rows).toEqual([{ u: `postgres.${ref}`, su: false }]);
    expect(await query('select current_user as u')).toEqual([{ u: `postgres.${ref}` }]);
  });

  it('a table made through the DB URL is usable through database/query and the pooler, and the other way round', async () => {
    await withConnection(dbUrl, (c) =>
      c.query("create table public.via_url (v text); insert into public.via_url values ('url')"),
    );
    expect(await query('select v from public.via_url')).toEqual([{ v: 'url' }]);
    await query("create table public.via_query (v text); insert into public.via_query values ('query')");
    await withConnection(poolerUrl(), async (c) => {
      expect((await c.query('select current_user as u')).rows).toEqual([{ u: `postgres.${ref}` }]);
      expect(
        (await c.query('select v from public.via_url union all select v from public.via_query')).rows,
      ).toEqual([{ v: 'url' }, { v: 'query' }]);
      await c.query(
        "create table public.via_pooler (v text); insert into public.via_pooler values ('pooler')",
      );
    });
    await withConnection(dbUrl, async (c) => {
      expect((await c.query('select v from public.via_query')).rows).toEqual([{ v: 'query' }]);
      expect((await c.query('select v from public.via_pooler')).rows).toEqual([{ v: 'pooler' }]);
    });
    // Default privileges in public as the hosted platform sets them: the API roles get the new table.
    const grants = await query(
      "select has_table_privilege('anon', 'public.via_url', 'select') as anon, has_table_privilege('service_role', 'public.via_pooler', 'insert') as service",
    );
    expect(grants).toEqual([{ anon: true, service: true }]);
  });

  it('create policy on storage.objects and storage.buckets works as the admin role (the documented way to secure Storage)', async () => {
    await query(`create policy "own folder" on storage.objects for select to authenticated
      using (bucket_id = 'avatars' and (storage.foldername(name))[1] = auth.uid()::text)`);
    await withConnection(dbUrl, (c) =>
      c.query(`create policy "public buckets" on storage.buckets for select to anon using (public)`),
    );
    const policies = await query(
      "select tablename, policyname from pg_policies where schemaname = 'storage' order by 1, 2",
    );
    expect(policies).toEqual([
      { tablename: 'buckets', policyname: 'public buckets' },
      { tablename: 'objects', policyname: 'own folder' },
    ]);
  });

  it("the admin role cannot reach another project's database nor the platform database", async () => {
    const other = await api(tp, 'POST', '/v1/projects', {
      body: { name: 'neighbour', organization_slug: 'default-org', db_pass: 'neighbour-pass-1' },
    });
    expect(other.status, other.text).toBe(201);
    const dbs = await tp.platform.pool.query<{ db_name: string }>(
      'select db_name from projects where ref = $1',
      [other.body.ref],
    );
    expect(await refused(withDatabase(dbUrl, dbs.rows[0]!.db_name))).toBe(true);
    expect(await refused(withDatabase(dbUrl, tp.platform.platformDatabase))).toBe(true);
    // Nor become anything more through SQL: no SET ROLE into the server-wide API roles.
    const r = await api(tp, 'POST', `/v1/projects/${ref}/database/query`, {
      body: { query: 'set role service_role' },
    });
    expect(r.status).toBe(400);
  });

  it("GET database/migrations reads as the login: a history table it may not read is a 400 in PostgreSQL's words", async () => {
    // As an install whose DB URL was the superuser's left it: the table belongs to the superuser.
    const ctx = await tp.platform.defaultProject();
    await withConnection(ctx.superuserUrl, (c) =>
      c.query(`create schema supabase_migrations;
        create table supabase_migrations.schema_migrations (version text primary key, name text, statements text[]);`),
    );
    const r = await api(tp, 'GET', `/v1/projects/${ref}/database/migrations`);
    expect(r.status, r.text).toBe(400);
    expect(r.body.message).toMatch(/permission denied for schema supabase_migrations/);
    await withConnection(ctx.superuserUrl, (c) => c.query('drop schema supabase_migrations cascade'));
    expect((await api(tp, 'GET', `/v1/projects/${ref}/database/migrations`)).body).toEqual([]);
  });
});
