/**
 * Project create/delete races (issue 29, item 7), as a token holder hammering the Management API
 * with their own organization, on the platform's own embedded server (pg_hba.conf is managed, as
 * in a default self-hosted install): parallel creates are each acknowledged exactly once with a
 * usable project, and a failure leaves nothing behind (a client that retries makes no duplicate);
 * parallel deletes give one 200 and the documented 400 "Resource has been removed" to the others,
 * never a 500, and leave nothing behind; a delete racing the create of the same project.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { withClient, withDatabase } from '../../src/db/pool.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api, createOtherUser } from '../support/management.js';
import { eventually } from '../support/eventually.js';

let tp: TestPlatform;
let hammer: { token: string; orgSlug: string };

beforeAll(async () => {
  tp = await startTestPlatform({ databaseUrl: undefined, dbPort: 0 });
  expect(tp.platform.servers.primary.managed).toBe(true);
  hammer = await createOtherUser(tp, 'hammer');
}, 120_000);

afterAll(async () => {
  await tp?.close();
});

const create = (name: string) =>
  api(tp, 'POST', '/v1/projects', {
    token: hammer.token,
    body: { name, organization_id: hammer.orgSlug, db_pass: 'a-long-password-1', region: 'us-east-1' },
  });

const remove = (ref: string) => api(tp, 'DELETE', `/v1/projects/${ref}`, { token: hammer.token });

/** The organization's projects in the registry: ref → status. */
async function registry(): Promise<Map<string, string>> {
  const { rows } = await tp.platform.pool.query<{ ref: string; status: string }>(
    'select ref, status from projects where organization_id = $1',
    [hammer.orgSlug],
  );
  return new Map(rows.map((r) => [r.ref, r.status]));
}

/** What exists on the server for `refs`: their databases and their logins. */
async function leftovers(refs: string[]): Promise<{ databases: string[]; roles: string[] }> {
  return withClient(withDatabase(tp.platform.servers.primary.url, 'postgres'), async (c) => {
    const dbs = await c.query<{ datname: string }>(
      `select datname from pg_database where datname = any($1::text[]) order by 1`,
      [refs.map((r) => `project_${r}`)],
    );
    const roles = await c.query<{ rolname: string }>(
      `select rolname from pg_roles where split_part(rolname, '.', 2) = any($1::text[]) order by 1`,
      [refs],
    );
    return { databases: dbs.rows.map((r) => r.datname), roles: roles.rows.map((r) => r.rolname) };
  });
}

/** Databases and logins on the server that belong to no live project (the server is this test's own). */
async function orphans(): Promise<{ databases: string[]; roles: string[] }> {
  const { rows } = await tp.platform.pool.query<{ ref: string; db_name: string }>(
    `select ref, db_name from projects where status <> 'REMOVED'`,
  );
  const refs = new Set(rows.map((r) => r.ref));
  const dbs = new Set(rows.map((r) => r.db_name));
  return withClient(withDatabase(tp.platform.servers.primary.url, 'postgres'), async (c) => {
    const d = await c.query<{ datname: string }>(
      `select datname from pg_database where datname like 'project\\_%'`,
    );
    const r = await c.query<{ rolname: string }>(
      `select rolname from pg_roles where rolname ~ '^(postgres|strata_sql|strata_fn)\\.[a-z]{20}$'`,
    );
    return {
      databases: d.rows.map((x) => x.datname).filter((n) => !dbs.has(n)),
      roles: r.rows.map((x) => x.rolname).filter((n) => !refs.has(n.split('.')[1] ?? '')),
    };
  });
}

/** The project answers through its own API with its service key (its database works). */
async function usable(ref: string): Promise<boolean> {
  const keys = await api(tp, 'GET', `/v1/projects/${ref}/api-keys`, { token: hammer.token });
  if (keys.status !== 200) return false;
  const service = keys.body.find((k: { name: string }) => k.name === 'service_role').api_key as string;
  const res = await fetch(`${tp.url}/project/${ref}/storage/v1/bucket`, {
    headers: { apikey: service, authorization: `Bearer ${service}` },
  });
  return res.status === 200;
}

describe('parallel POST /v1/projects', () => {
  it('20 at once: each acknowledged 201 is a usable project, nothing is created unacknowledged', async () => {
    const before = await registry();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => create(`burst-${i}`)));
    const statuses = answers.map((a) => a.status);
    // 429: the Management API's rate limit for project creation, which creates nothing.
    for (const a of answers) expect([201, 429], a.text).toContain(a.status);
    const acked = answers.filter((a) => a.status === 201).map((a) => a.body.ref as string);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    // Exactly the acknowledged projects exist, once each.
    const after = await registry();
    const added = [...after.keys()].filter((r) => !before.has(r));
    expect(added.sort()).toEqual([...acked].sort());
    for (const ref of acked) expect(await usable(ref), ref).toBe(true);
    expect(await orphans()).toEqual({ databases: [], roles: [] });
  }, 180_000);
});

describe('a create that fails after the database was made', () => {
  it('answers an error and leaves no project, database or login (a retry makes no duplicate)', async () => {
    // The server's pg_hba.conf gets a line PostgreSQL rejects: the sync after creating fails.
    const hba = await withClient(
      tp.platform.servers.primary.url,
      async (c) => (await c.query<{ f: string }>(`select current_setting('hba_file') as f`)).rows[0]!.f,
    );
    const original = readFileSync(hba, 'utf8');
    writeFileSync(hba, `${original}\nthis is not a pg_hba line\n`);
    const before = await registry();
    try {
      const answer = await create('unlucky');
      expect(answer.status, answer.text).toBe(500);
      expect(answer.body.message).toBe('Failed to create project');
    } finally {
      writeFileSync(hba, original);
    }
    const after = await registry();
    const added = [...after].filter(([r]) => !before.has(r));
    // At most a tombstone: nothing live, nothing on the server.
    for (const [, status] of added) expect(status).toBe('REMOVED');
    expect(await orphans()).toEqual({ databases: [], roles: [] });
    const retry = await create('unlucky');
    expect(retry.status, retry.text).toBe(201);
    expect(await usable(retry.body.ref)).toBe(true);
  }, 120_000);
});

describe('parallel DELETE /v1/projects/{ref}', () => {
  it('5 at once: one 200, the others 400 "Resource has been removed", no 500, nothing left', async () => {
    const made = await create('doomed');
    expect(made.status, made.text).toBe(201);
    const ref = made.body.ref as string;
    const answers = await Promise.all(Array.from({ length: 5 }, () => remove(ref)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses, answers.map((a) => a.text).join('\n')).toEqual([200, 400, 400, 400, 400]);
    for (const a of answers.filter((x) => x.status === 400))
      expect(a.body.message).toBe('Resource has been removed');
    expect((await registry()).get(ref)).toBe('REMOVED');
    expect(await leftovers([ref])).toEqual({ databases: [], roles: [] });
    // And afterwards: the documented answer, still not a 500.
    expect((await remove(ref)).status).toBe(400);
  }, 120_000);

  it('deletes of several projects at once each succeed and leave nothing behind', async () => {
    const made = await Promise.all([create('d1'), create('d2'), create('d3')]);
    for (const m of made) expect(m.status, m.text).toBe(201);
    const refs = made.map((m) => m.body.ref as string);
    const answers = await Promise.all(refs.flatMap((r) => [remove(r), remove(r)]));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 400, 400, 400]);
    expect(await leftovers(refs)).toEqual({ databases: [], roles: [] });
    expect(await orphans()).toEqual({ databases: [], roles: [] });
  }, 120_000);
});

describe('a delete racing the create of the same project', () => {
  it('the create is acknowledged, the delete removes it, nothing is left behind', async () => {
    const before = await registry();
    const creating = create('racing');
    // Delete the project the moment its registry row appears, while its create is still answering.
    const ref = await eventually(
      async () => [...(await registry()).keys()].find((r) => !before.has(r)) ?? false,
      { timeoutMs: 60_000, intervalMs: 5 },
    ).catch(() => undefined);
    const deleted = ref ? await remove(ref) : undefined;
    const created = await creating;
    expect(created.status, created.text).toBe(201);
    expect(created.body.ref).toBe(ref);
    expect(deleted?.status, deleted?.text).toBe(200);
    expect((await registry()).get(ref as string)).toBe('REMOVED');
    expect(await leftovers([ref as string])).toEqual({ databases: [], roles: [] });
  }, 120_000);
});
