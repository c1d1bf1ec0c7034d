/**
 * The Supabase CLI 3's database workflow against the platform: the real binary (npm `supabase`,
 * from `@supabase/cli-linux-x64`) with a profile pointing at the platform, linked to a project
 * created with a `db_pass`. Database commands connect through the platform's pooler address (the
 * PostgreSQL router, here on a random 127.x.y.z address and port) with `--remote=<url>`, the URL
 * being `/config/database/pooler`'s connection_string with the password filled in: CLI 3's own
 * linked-project resolution needs a DNS name for the pooler host (it refuses IP addresses: "failed
 * to parse pooler TLD") and always uses port 5432, which this machine's loopback names cannot give.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSupabase, writeCliProfile, type CliRun as Run } from '../support/supabase-cli.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api } from '../support/management.js';

let tp: TestPlatform;
let home: string;
let workdir: string;
let ref: string;
let dbUrl: string;
const DB_PASS = 'cli-db-pass-1';
const poolerHost = `127.${10 + Math.floor(Math.random() * 200)}.${1 + Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

const supabase = (args: string[], env: Record<string, string> = {}, cwd = workdir): Promise<Run> =>
  runSupabase(args, { home, token: tp.platform.defaultAccessToken, cwd, env });

const show = (r: Run) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

beforeAll(async () => {
  tp = await startTestPlatform({ poolerHost, poolerPort: 0 });
  home = mkdtempSync(join(tmpdir(), 'strata-cli-db-'));
  workdir = join(home, 'app');
  mkdirSync(workdir);
  writeCliProfile(home, tp.url);
  const created = await api(tp, 'POST', '/v1/projects', {
    body: { name: 'cli-db', organization_slug: 'default-org', db_pass: DB_PASS },
  });
  expect(created.status, created.text).toBe(201);
  ref = created.body.ref;
  const pooler = await api(tp, 'GET', `/v1/projects/${ref}/config/database/pooler`);
  dbUrl = String(pooler.body[0].connection_string).replace('[YOUR-PASSWORD]', DB_PASS);
}, 120_000);
afterAll(async () => {
  await tp?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('Supabase CLI 3 database workflow against the platform', { timeout: 300_000 }, () => {
  it('the pooler router is listening where /config/database/pooler says', async () => {
    const port = tp.platform.pooler?.port;
    expect(tp.platform.pooler).toEqual({ host: poolerHost, port: expect.any(Number) });
    const r = await api(tp, 'GET', `/v1/projects/${ref}/config/database/pooler`);
    expect(r.status).toBe(200);
    expect(r.body[0]).toMatchObject({
      database_type: 'PRIMARY',
      db_user: `postgres.${ref}`,
      db_host: poolerHost,
      db_port: port,
      db_name: 'postgres',
      connection_string: `postgresql://postgres.${ref}:[YOUR-PASSWORD]@${poolerHost}:${port}/postgres?sslmode=disable`,
    });
  });

  it('init and link --project-ref with the database password', async () => {
    const init = await supabase(['init']);
    expect(init.code, show(init)).toBe(0);
    const link = await supabase(['link', '--project-ref', ref, '--password', DB_PASS]);
    expect(link.code, show(link)).toBe(0);
    expect(link.stdout + link.stderr).toContain('Finished supabase link');
  });

  it('migration new, db push, migration list', async () => {
    const mk = await supabase(['migration', 'new', 'create_notes']);
    expect(mk.code, show(mk)).toBe(0);
    const dir = join(workdir, 'supabase', 'migrations');
    const file = readdirSync(dir).find((f) => f.endsWith('_create_notes.sql'));
    expect(file).toBeDefined();
    writeFileSync(
      join(dir, file as string),
      "create table public.cli_notes (id bigint generated always as identity primary key, body text not null);\ninsert into public.cli_notes (body) values ('from the CLI');\n",
    );
    const push = await supabase(['db', 'push', `--remote=${dbUrl}`, '--yes']);
    expect(push.code, show(push)).toBe(0);
    expect(push.stdout + push.stderr).toContain(file);

    const history = await api(tp, 'GET', `/v1/projects/${ref}/database/migrations`);
    expect(history.body).toEqual([{ version: (file as string).split('_')[0], name: 'create_notes' }]);

    const list = await supabase(['migration', 'list', `--remote=${dbUrl}`]);
    expect(list.code, show(list)).toBe(0);
    const version = (file as string).split('_')[0] as string;
    // Local and remote columns both list the version.
    expect(list.stdout).toMatch(new RegExp(`${version}\`?\\s*[|│]\\s*\`?${version}`));

    const again = await supabase(['db', 'push', `--remote=${dbUrl}`, '--yes']);
    expect(again.code, show(again)).toBe(0);
    expect(again.stdout + again.stderr).toMatch(/up to date/i);
  });

  it('db query runs SQL through POST /database/query as the project login', async () => {
    const r = await supabase([
      'db',
      'query',
      '--linked',
      'select current_user as who, body from public.cli_notes',
      '-o',
      'json',
    ]);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toContain(`postgres.${ref}`);
    expect(r.stdout).toContain('from the CLI');
    const bad = await supabase(['db', 'query', '--linked', 'select * from no_such_table']);
    expect(bad.code).not.toBe(0);
    expect(bad.stdout + bad.stderr).toContain('42P01');
  });

  it('inspect db table-sizes', async () => {
    const r = await supabase(['inspect', 'db', 'table-sizes', `--remote=${dbUrl}`]);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toContain('cli_notes');
  });

  it('gen types --lang typescript matches the typescript route', async () => {
    const r = await supabase(['gen', 'types', '--lang', 'typescript', '--project-id', ref]);
    expect(r.code, show(r)).toBe(0);
    const viaApi = await api(tp, 'GET', `/v1/projects/${ref}/types/typescript?included_schemas=public`);
    expect(r.stdout.trim()).toBe(viaApi.body.types.trim());
    expect(r.stdout).toContain('cli_notes: {');
  });

  it('secrets list', async () => {
    const r = await supabase(['secrets', 'list', '--project-ref', ref]);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toContain('SUPABASE_URL');
  });
});
