/**
 * Tenant → platform superuser (issue 29 item 1), written as the attacker: someone with a personal
 * access token who made their own organization and project, and runs SQL in it through
 * `POST /v1/projects/{ref}/database/query` (as the project's login `postgres.<ref>`).
 *
 * The class: a statement the platform runs with more privilege than the tenant must not read, call
 * or fire anything the tenant can create or replace. Each test plants one such object whose body is
 * the same canary: when it runs as a superuser, it writes a file on the server (`COPY … TO`, i.e.
 * the database server's OS user) and makes the tenant's login a superuser. Each then drives the
 * platform path that used to run it as a superuser, and checks that neither happened.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withClient, withDatabase } from '../../src/db/pool.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { serverUrl } from '../support/database.js';
import { api, createOtherUser } from '../support/management.js';
import { subscribe, wsClient, wsUrl } from '../realtime/support.js';
import { eventually } from '../support/eventually.js';

let tp: TestPlatform;
let attacker: { token: string; orgSlug: string };
let scratch: string;

beforeAll(async () => {
  // A short query timeout: one variant drives the statement watchdog.
  tp = await startTestPlatform({ dbQueryTimeoutMs: 1_000 });
  attacker = await createOtherUser(tp, 'attacker');
  scratch = mkdtempSync(join(tmpdir(), 'strata-canary-'));
  // The database server may run as another OS user: its canary must be able to write here.
  chmodSync(scratch, 0o777);
}, 60_000);

afterAll(async () => {
  await tp?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

interface Planted {
  ref: string;
  /** The file the canary writes when it runs as a superuser. */
  file: string;
  sql(query: string): Promise<{ status: number; text: string; body: unknown }>;
}

/** The attacker's own project, with `public.canary()` planted (does harm only as a superuser). */
async function attackerProject(label: string): Promise<Planted> {
  const created = await api(tp, 'POST', '/v1/projects', {
    token: attacker.token,
    body: { name: label, organization_slug: attacker.orgSlug, db_pass: `pw-${label}-x1` },
  });
  expect(created.status, created.text).toBe(201);
  const ref: string = created.body.ref;
  const file = join(scratch, `${label}.txt`);
  const sql = (query: string) =>
    api(tp, 'POST', `/v1/projects/${ref}/database/query`, { token: attacker.token, body: { query } });
  const r = await sql(`
    create or replace function public.canary() returns text language plpgsql as $f$
    begin
      -- Not is_superuser: that is the session's role, not a security definer function's owner.
      if (select rolsuper from pg_catalog.pg_roles where rolname = current_user) then
        begin execute format('copy (select current_user) to %L', ${lit(file)});
        exception when others then null; end;
        begin execute format('alter role %I superuser', ${lit(`postgres.${ref}`)});
        exception when others then null; end;
      end if;
      return 'planted';
    end $f$;
    grant execute on function public.canary() to public;`);
  expect(r.status, r.text).toBe(201);
  return { ref, file, sql };
}

function lit(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** Whether the canary ran as a superuser: its file exists, or the tenant's login became one. */
async function escalated(p: Planted): Promise<{ file: boolean; loginIsSuperuser: boolean }> {
  const { rows } = await withClient(withDatabase(serverUrl(), 'postgres'), (c) =>
    c.query<{ s: boolean }>('select rolsuper as s from pg_roles where rolname = $1', [`postgres.${p.ref}`]),
  );
  return { file: existsSync(p.file), loginIsSuperuser: rows[0]?.s === true };
}

const SAFE = { file: false, loginIsSuperuser: false };

describe('no platform session more privileged than the tenant runs what the tenant planted', () => {
  it('GET database/migrations: a view in supabase_migrations calling the tenant function (the reported exploit)', async () => {
    const p = await attackerProject('migrations-view');
    const r = await p.sql(`create schema supabase_migrations;
      create view supabase_migrations.schema_migrations as select public.canary() as version, 'x'::text as name;`);
    expect(r.status, r.text).toBe(201);
    const list = await api(tp, 'GET', `/v1/projects/${p.ref}/database/migrations`, { token: attacker.token });
    // Still the tenant's own history (read as the tenant's login, so the view runs as that login).
    expect(list.status, list.text).toBe(200);
    expect(list.body).toEqual([{ version: 'planted', name: 'x' }]);
    expect(await escalated(p)).toEqual(SAFE);
  });

  it('GET types/typescript: a function in public shadowing pg_catalog.pg_relation_is_updatable (CVE-2018-1058 family)', async () => {
    const p = await attackerProject('types-shadow');
    // pg_catalog's takes regclass; an (oid, boolean) function is the better match for c.oid.
    const r = await p.sql(`create table public.t (id int primary key);
      create view public.v as select id from public.t;
      create function public.pg_relation_is_updatable(oid, boolean) returns integer language plpgsql as $f$
      begin perform public.canary(); return pg_catalog.pg_relation_is_updatable($1::regclass, $2); end $f$;
      create function public.pg_column_is_updatable(oid, smallint, boolean) returns boolean language plpgsql as $f$
      begin perform public.canary(); return pg_catalog.pg_column_is_updatable($1::regclass, $2, $3); end $f$;`);
    expect(r.status, r.text).toBe(201);
    const types = await api(tp, 'GET', `/v1/projects/${p.ref}/types/typescript`, { token: attacker.token });
    expect(types.status, types.text).toBe(200);
    expect(types.body.types).toContain('v: {');
    expect(await escalated(p)).toEqual(SAFE);
  });

  it('project load at platform start: a function in public shadowing pg_advisory_lock in the migration runner', async () => {
    const p = await attackerProject('bootstrap-shadow');
    // Unknown-typed parameters prefer text: (text, text) beats pg_catalog's (integer, integer).
    const r = await p.sql(`create function public.pg_advisory_lock(text, text) returns void
      language plpgsql as $f$
      begin perform public.canary(); perform pg_catalog.pg_advisory_lock($1::int, $2::int); end $f$;`);
    expect(r.status, r.text).toBe(201);
    // What every process does on its first use of the project (platform start, another node, a move).
    await tp.platform.forget(p.ref);
    expect(await tp.platform.project(p.ref)).toBeDefined();
    expect(await escalated(p)).toEqual(SAFE);
  });

  it("project load: a schema named after the platform superuser (first on its default search_path, '$user')", async () => {
    const p = await attackerProject('user-schema');
    const superuser = JSON.stringify(decodeURIComponent(new URL(serverUrl()).username));
    const r = await p.sql(`create schema ${superuser};
      create function ${superuser}.pg_advisory_unlock(text, text) returns boolean
      language plpgsql as $f$
      begin perform public.canary(); return pg_catalog.pg_advisory_unlock($1::int, $2::int); end $f$;`);
    expect(r.status, r.text).toBe(201);
    await tp.platform.forget(p.ref);
    expect(await tp.platform.project(p.ref)).toBeDefined();
    expect(await escalated(p)).toEqual(SAFE);
  });

  it("the GraphQL schema-version event trigger (security definer) does not resolve names in the tenant's schemas", async () => {
    const p = await attackerProject('event-trigger');
    // The trigger fires on the tenant's own DDL, as its owner (a superuser): its nextval('…') call
    // would prefer a nextval(text) found on the caller's search_path over pg_catalog.nextval(regclass).
    const r = await p.sql(`create function public.nextval(text) returns bigint language plpgsql as $f$
      begin perform public.canary(); return pg_catalog.nextval($1::regclass); end $f$;`);
    expect(r.status, r.text).toBe(201);
    const ddl = await p.sql('create table public.after_plant (id int)');
    expect(ddl.status, ddl.text).toBe(201);
    expect(await escalated(p)).toEqual(SAFE);
  });

  it('PUT/GET config/database/postgres: a function in public shadowing unnest(anyarray) with unnest(text[])', async () => {
    const p = await attackerProject('config-shadow');
    // An exact text[] match beats pg_catalog's polymorphic unnest(anyarray) for pg_db_role_setting.setconfig.
    const r = await p.sql(`create function public.unnest(text[]) returns setof text language plpgsql as $f$
      begin perform public.canary(); return query select pg_catalog.unnest($1); end $f$;`);
    expect(r.status, r.text).toBe(201);
    // A per-database setting to read back (unnest runs once per settings row).
    const put = await api(tp, 'PUT', `/v1/projects/${p.ref}/config/database/postgres`, {
      token: attacker.token,
      body: { statement_timeout: '30s' },
    });
    expect(put.status, put.text).toBe(200);
    const config = await api(tp, 'GET', `/v1/projects/${p.ref}/config/database/postgres`, {
      token: attacker.token,
    });
    expect(config.status, config.text).toBe(200);
    expect(config.body).toMatchObject({ statement_timeout: '30s' });
    expect(await escalated(p)).toEqual(SAFE);
  });

  it("database/query's statement watchdog: a function in public shadowing pg_terminate_backend", async () => {
    const p = await attackerProject('watchdog-shadow');
    // The watchdog ends a session that lifted its own statement timeout, passing the pid as an
    // unknown-typed parameter: a (text) function beats pg_catalog's (integer, bigint).
    const r =
      await p.sql(`create function public.pg_terminate_backend(text) returns boolean language plpgsql as $f$
      begin perform public.canary(); return pg_catalog.pg_terminate_backend($1::int); end $f$;`);
    expect(r.status, r.text).toBe(201);
    const slow = await p.sql('set statement_timeout = 0; select pg_sleep(6)');
    expect(slow.status, slow.text).toBe(400);
    expect(slow.text).toContain('57014');
    // The watchdog's session ran before the answer; give its statement a moment to finish.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await escalated(p)).toEqual(SAFE);
  }, 20_000);

  it('realtime change feed and project deletion: a function in public shadowing starts_with(name, text)', async () => {
    const p = await attackerProject('realtime-shadow');
    // The slot queries compare `slot_name` (type name): (name, text) beats pg_catalog's (text, text).
    const r =
      await p.sql(`create function public.starts_with(name, text) returns boolean language plpgsql as $f$
      begin perform public.canary(); return pg_catalog.starts_with($1::text, $2); end $f$;
      create table public.item (id int primary key, label text);
      grant select on public.item to anon;
      comment on schema public is '@graphql({"strata": {"subscriptions": true}})';`);
    expect(r.status, r.text).toBe(201);
    const keys = await api(tp, 'GET', `/v1/projects/${p.ref}/api-keys`, { token: attacker.token });
    const anon = (keys.body as { name: string; api_key: string }[]).find((k) => k.name === 'anon')?.api_key;
    // A live query starts the project's change feed (its slot is made and stale ones dropped)...
    const client = wsClient(wsUrl(tp, `/project/${p.ref}`), { apikey: anon });
    const live = subscribe(client, 'subscription { itemCollection { edges { node { id } } } }');
    await live.until((x) => x.data?.itemCollection !== undefined, 0, 20_000);
    await eventually(() => tp.realtime.stats().feeds === 1, { timeoutMs: 10_000, intervalMs: 20 });
    expect(await escalated(p)).toEqual(SAFE);
    live.stop();
    await client.dispose();
    // ...and deleting the project drops the slots from a session in its database.
    const del = await api(tp, 'DELETE', `/v1/projects/${p.ref}`, { token: attacker.token });
    expect(del.status, del.text).toBe(200);
    expect(existsSync(p.file)).toBe(false);
  }, 60_000);
});
