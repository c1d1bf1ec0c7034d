/**
 * `POST /v1/projects/{ref}/database/query` (+ `/read-only`) and the other database routes the CLI
 * reads: hostile input first, then results, as the project's login.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api } from '../support/management.js';

let tp: TestPlatform;
let ref: string;
let other: string;

const query = (body: unknown, path = 'database/query', r = ref) =>
  api(tp, 'POST', `/v1/projects/${r}/${path}`, { body });

beforeAll(async () => {
  tp = await startTestPlatform({ dbQueryTimeoutMs: 1_000 });
  for (const name of ['query-a', 'query-b']) {
    const r = await api(tp, 'POST', '/v1/projects', {
      body: { name, organization_slug: 'default-org', db_pass: `pw-${name}` },
    });
    expect(r.status, r.text).toBe(201);
    if (name === 'query-a') ref = r.body.ref;
    else other = r.body.ref;
  }
}, 120_000);
afterAll(async () => {
  await tp?.close();
});

describe('database/query: bad input', () => {
  it('refuses a missing, empty or non-string query, NUL bytes, unknown keys and non-array parameters', async () => {
    for (const body of [
      undefined,
      {},
      { query: '' },
      { query: 42 },
      { query: 'select 1\u0000' },
      { query: 'select 1', extra: true },
      { query: 'select $1', parameters: 'x' },
      { query: 'select $1::text', parameters: ['a\u0000b'] },
    ]) {
      const r = await query(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toEqual({ message: expect.any(String) });
    }
  });

  it('a PostgreSQL error is 400 with its SQLSTATE and message', async () => {
    const r = await query({ query: 'select * from no_such_table' });
    expect(r.status).toBe(400);
    // With where it is, as psql shows it: the line, and a caret under the character.
    expect(r.body.message).toBe(
      'Failed to run sql query: ERROR:  42P01: relation "no_such_table" does not exist\n' +
        'LINE 1: select * from no_such_table\n' +
        '                      ^',
    );
    const second = await query({ query: 'select 1;\nselect\n  nope + 1' });
    expect(second.body.message).toMatch(
      /42703: column "nope" does not exist\nLINE 3: {3}nope \+ 1\n {10}\^$/,
    );
    const syntax = await query({ query: 'selec 1' });
    expect(syntax.status).toBe(400);
    expect(syntax.body.message).toMatch(/42601: syntax error/);
  });

  it('SQL that runs too long is cancelled at the statement timeout, even when it lifts the timeout', async () => {
    const slow = await query({ query: 'select pg_sleep(30)' });
    expect(slow.status).toBe(400);
    expect(slow.body.message).toMatch(/57014: canceling statement due to statement timeout/);
    const lifted = await query({ query: 'set statement_timeout = 0; select pg_sleep(30)' });
    expect(lifted.status).toBe(400);
    expect(lifted.body.message).toMatch(/57014/);
    // No session left behind.
    const { rows } = await tp.platform.pool.query(
      `select count(*)::int as n from pg_stat_activity where application_name = 'strata-query' and query like '%pg_sleep(30)%'`,
    );
    expect(rows[0].n).toBe(0);
  });

  it('resetting the role cannot escape the project login', async () => {
    const r = await query({ query: 'reset role; select current_user as u, session_user as s' });
    expect(r.status, r.text).toBe(201);
    expect(r.body[0].u).toBe(`strata_sql.${ref}`);
    const create = await query({ query: 'reset role; create table public.escaped (id int)' });
    expect(create.status).toBe(400);
    expect(create.body.message).toMatch(/42501/);
    const superuser = await query({ query: 'set role postgres' });
    expect(superuser.status).toBe(400);
  });

  it('read-only: one statement, no writes', async () => {
    await query({ query: 'create table public.ro_target (id int)' });
    const write = await query(
      { query: 'insert into public.ro_target values (1)' },
      'database/query/read-only',
    );
    expect(write.status).toBe(400);
    expect(write.body.message).toMatch(/25006/);
    const escaped = await query(
      { query: 'commit; insert into public.ro_target values (1)' },
      'database/query/read-only',
    );
    expect(escaped.status).toBe(400);
    const flag = await query({ query: 'insert into public.ro_target values (1)', read_only: true });
    expect(flag.status).toBe(400);
    const count = await query(
      { query: 'select count(*)::int as n from public.ro_target' },
      'database/query/read-only',
    );
    expect(count.status).toBe(201);
    expect(count.body).toEqual([{ n: 0 }]);
  });
});

describe('database/query: results', () => {
  it('runs as the project login in its database and answers 201 with the last statement’s rows', async () => {
    const r = await query({
      query:
        "create table public.q_items (id int primary key, label text, meta jsonb); insert into public.q_items values (1, 'one', '{\"a\":1}'), (2, null, null); select * from public.q_items order by id",
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toEqual([
      { id: 1, label: 'one', meta: { a: 1 } },
      { id: 2, label: null, meta: null },
    ]);
    const who = await query({ query: 'select current_user as u, current_database() as d' });
    expect(who.body[0].u).toBe(`postgres.${ref}`);
    const ctx = await tp.platform.project(ref);
    expect(who.body[0].d).toBe(ctx?.dbName);
  });

  it('statements without rows give [], parameters are bound', async () => {
    const ddl = await query({ query: 'create index on public.q_items (label)' });
    expect(ddl.status).toBe(201);
    expect(ddl.body).toEqual([]);
    const p = await query({ query: 'select $1::text as v, $2::int + 1 as n', parameters: ["it's", 41] });
    expect(p.body).toEqual([{ v: "it's", n: 42 }]);
  });

  it("a project's query never sees another project's tables", async () => {
    const r = await query({ query: 'select * from public.q_items' }, 'database/query', other);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/42P01/);
  });
});

describe('connection and settings routes', () => {
  it('pooler config without the router: the project server itself and the real database name', async () => {
    const r = await api(tp, 'GET', `/v1/projects/${ref}/config/database/pooler`);
    expect(r.status).toBe(200);
    const ctx = await tp.platform.project(ref);
    expect(r.body).toEqual([
      expect.objectContaining({
        identifier: ref,
        database_type: 'PRIMARY',
        db_user: `postgres.${ref}`,
        db_name: ctx?.dbName,
        pool_mode: 'session',
        connection_string: expect.stringMatching(/^postgresql:\/\/postgres\.[a-z]{20}:\[YOUR-PASSWORD\]@/),
      }),
    ]);
    const patch = await api(tp, 'PATCH', `/v1/projects/${ref}/config/database/pooler`, {
      body: { default_pool_size: 10 },
    });
    expect(patch.status).toBe(404);
    expect(patch.body.message).toMatch(/Pooler settings/);
  });

  it('postgres config: per-database settings through ALTER DATABASE, validated by PostgreSQL', async () => {
    const put = await api(tp, 'PUT', `/v1/projects/${ref}/config/database/postgres`, {
      body: { statement_timeout: '15s', max_parallel_workers_per_gather: 1 },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toEqual({ statement_timeout: '15s', max_parallel_workers_per_gather: 1 });
    const get = await api(tp, 'GET', `/v1/projects/${ref}/config/database/postgres`);
    expect(get.body).toEqual(put.body);
    for (const body of [
      { statement_timeout: 'soon' },
      { shared_buffers: '1GB' },
      { no_such_setting: 1 },
      { work_mem: 5 },
      { work_mem: 'x\u0000' },
    ]) {
      const bad = await api(tp, 'PUT', `/v1/projects/${ref}/config/database/postgres`, { body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
    const reset = await api(tp, 'PUT', `/v1/projects/${ref}/config/database/postgres`, {
      body: { statement_timeout: null },
    });
    expect(reset.body).toEqual({ max_parallel_workers_per_gather: 1 });
  });

  it('ssl-enforcement is off and cannot be turned on; health and upgrade status tell what runs', async () => {
    const ssl = await api(tp, 'GET', `/v1/projects/${ref}/ssl-enforcement`);
    expect(ssl.body).toEqual({ currentConfig: { database: false }, appliedSuccessfully: true });
    const on = await api(tp, 'PUT', `/v1/projects/${ref}/ssl-enforcement`, {
      body: { requestedConfig: { database: true } },
    });
    expect(on.status).toBe(404);
    const health = await api(
      tp,
      'GET',
      `/v1/projects/${ref}/health?services=db,db_postgres_user,rest,storage`,
    );
    expect(health.status).toBe(200);
    expect(health.body.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ['db', 'ACTIVE_HEALTHY'],
      ['db_postgres_user', 'ACTIVE_HEALTHY'],
      ['rest', 'UNHEALTHY'],
      ['storage', 'ACTIVE_HEALTHY'],
    ]);
    expect((await api(tp, 'GET', `/v1/projects/${ref}/health`)).status).toBe(400);
    expect((await api(tp, 'GET', `/v1/projects/${ref}/health?services=bogus`)).status).toBe(400);
    const upgrade = await api(tp, 'GET', `/v1/projects/${ref}/upgrade/status`);
    expect(upgrade.body).toEqual({ databaseUpgradeStatus: null });
  });

  it('features Strata does not have answer 404 naming them', async () => {
    for (const [method, path, pattern] of [
      ['GET', 'config/auth', /auth server/i],
      ['GET', 'postgrest', /PostgREST/],
      ['GET', 'database/backups', /backups/i],
      ['POST', 'database/backups/restore-pitr', /Point-in-time recovery/],
      ['POST', 'cli/login-role', /login roles/],
      ['PATCH', 'config/storage', /STRATA_STORAGE_FILE_SIZE_LIMIT/],
    ] as const) {
      const r = await api(tp, method, `/v1/projects/${ref}/${path}`, method === 'GET' ? {} : { body: {} });
      expect(r.status, path).toBe(404);
      expect(r.body.message).toMatch(pattern);
    }
    const storage = await api(tp, 'GET', `/v1/projects/${ref}/config/storage`);
    expect(storage.body.fileSizeLimit).toBe(tp.config.storageFileSizeLimit);
  });

  it('migrations: apply records the history the CLI reads; a failing one records nothing', async () => {
    expect((await api(tp, 'GET', `/v1/projects/${other}/database/migrations`)).body).toEqual([]);
    const ok = await api(tp, 'POST', `/v1/projects/${other}/database/migrations`, {
      body: { query: 'create table public.migrated (id int)', name: 'add_migrated' },
    });
    expect(ok.status, ok.text).toBe(200);
    const bad = await api(tp, 'POST', `/v1/projects/${other}/database/migrations`, {
      body: { query: 'create table public.migrated (id int)', name: 'again' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/42P07/);
    const list = await api(tp, 'GET', `/v1/projects/${other}/database/migrations`);
    expect(list.body).toEqual([{ version: expect.stringMatching(/^\d{14}$/), name: 'add_migrated' }]);
  });
});
