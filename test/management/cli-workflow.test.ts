/**
 * The Supabase CLI workflow exactly as docs/cli.md shows it (issue 31), with the real CLI 3 (npm
 * `supabase`), on a platform whose pooler runs on its default address while this machine's own
 * PostgreSQL listens on 127.0.0.1:5432 (the build machines have one: a newcomer's situation).
 * Commands run as outside a terminal (no SUPABASE_YES, no access token in the environment after
 * `login`): each one that changes something carries `--yes`, as the docs show, and none prints a
 * deprecation warning. The function is the CLI's own template; its `npm:@supabase/server` import
 * comes from the build's seed (dist/deno-seed), else from the registry (template-offline.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_POOLER_PORT, configFromEnv } from '../../src/config.js';
import { runSupabase, writeCliProfile, type CliRun as Run } from '../support/supabase-cli.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { freeTestPort } from '../support/free-port.js';
import { api } from '../support/management.js';
import { invokeFunction } from '../support/functions.js';

let tp: TestPlatform;
let home: string;
let workdir: string;
let ref = '';
let dbUrl = '';
let anonKey = '';
const DB_PASS = 'workflow-db-pass-1';
const outputs: string[] = [];

/** The CLI as a shell runs it: the access token comes from `login`, confirmations from --yes. */
async function supabase(args: string[]): Promise<Run> {
  const r = await runSupabase(args, {
    home,
    token: '',
    cwd: workdir,
    env: { SUPABASE_YES: '', CI: '' },
    timeoutMs: 150_000,
  });
  outputs.push(`$ supabase ${args.join(' ')}\n${r.stdout}${r.stderr}`);
  return r;
}

const show = (r: Run) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

/** Whether something accepts TCP connections at 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

beforeAll(async () => {
  // The default pooler port, unless something on this machine has it already (another run of
  // `strata start`: then the pooler is not started, and the platform is started again elsewhere).
  const poolerHost = configFromEnv({}).poolerHost;
  tp = await startTestPlatform({ poolerHost, poolerPort: DEFAULT_POOLER_PORT });
  if (!tp.platform.pooler) {
    await tp.close();
    tp = await startTestPlatform({ poolerHost, poolerPort: await freeTestPort() });
  }
  home = mkdtempSync(join(tmpdir(), 'strata-cli-workflow-'));
  workdir = join(home, 'my-app');
  mkdirSync(workdir);
  writeCliProfile(home, tp.url);
}, 120_000);
afterAll(async () => {
  await tp?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('the Supabase CLI workflow of docs/cli.md', { timeout: 600_000 }, () => {
  it('the pooler does not collide with the PostgreSQL on 5432, and every address names it', async () => {
    expect(DEFAULT_POOLER_PORT).toBe(54329);
    expect(configFromEnv({}).poolerPort).toBe(54329);
    expect(configFromEnv({ STRATA_POOLER_PORT: 'off' }).poolerPort).toBeUndefined();
    expect(tp.platform.pooler?.host).toBe('127.0.0.1');
    expect(tp.platform.pooler?.port).not.toBe(5432);
    // Informational on machines without one; the build machines have it.
    if (!(await listening(5432)))
      console.warn('no PostgreSQL on 127.0.0.1:5432 here: the collision is not exercised');
  });

  it('login, projects create, init, link', async () => {
    const login = await supabase(['login', '--token', tp.platform.defaultAccessToken]);
    expect(login.code, show(login)).toBe(0);
    const created = await supabase([
      'projects',
      'create',
      'my-app',
      '--org-id',
      'default-org',
      '--db-password',
      DB_PASS,
      '--region',
      'us-east-1',
      '--yes',
    ]);
    expect(created.code, show(created)).toBe(0);
    ref = /\|\s*([a-z]{20})\s*\|\s*my-app\s*\|/.exec(created.stdout)?.[1] ?? '';
    expect(ref, show(created)).toMatch(/^[a-z]{20}$/);
    anonKey = (await tp.platform.project(ref))?.anonKey ?? '';

    const pooler = await api(tp, 'GET', `/v1/projects/${ref}/config/database/pooler`);
    const { host, port } = tp.platform.pooler as { host: string; port: number };
    expect(pooler.body[0].connection_string).toBe(
      `postgresql://postgres.${ref}:[YOUR-PASSWORD]@${host}:${port}/postgres?sslmode=disable`,
    );
    dbUrl = String(pooler.body[0].connection_string).replace('[YOUR-PASSWORD]', DB_PASS);

    const init = await supabase(['init']);
    expect(init.code, show(init)).toBe(0);
    const link = await supabase(['link', '--project-ref', ref]);
    expect(link.code, show(link)).toBe(0);
    expect(link.stdout + link.stderr).toContain('Finished supabase link');
  });

  it('migration new, db push --remote=<pooler URL> --yes, migration list', async () => {
    const mk = await supabase(['migration', 'new', 'create_notes']);
    expect(mk.code, show(mk)).toBe(0);
    const dir = join(workdir, 'supabase', 'migrations');
    const file = readdirSync(dir).find((f) => f.endsWith('_create_notes.sql')) as string;
    expect(file).toBeDefined();
    writeFileSync(
      join(dir, file),
      "create table public.notes (id bigint generated always as identity primary key, body text not null);\ninsert into public.notes (body) values ('first note');\n",
    );
    const push = await supabase(['db', 'push', `--remote=${dbUrl}`, '--yes']);
    expect(push.code, show(push)).toBe(0);
    expect(push.stdout + push.stderr).toContain(file);
    const version = file.split('_')[0] as string;
    const list = await supabase(['migration', 'list', `--remote=${dbUrl}`]);
    expect(list.code, show(list)).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`${version}\`?\\s*[|│]\\s*\`?${version}`));
  });

  it('db push --remote (the linked project, no URL) fails non-zero as docs/cli.md explains', async () => {
    const r = await supabase(['db', 'push', '--remote', '--password', DB_PASS, '--yes']);
    expect(r.code, show(r)).not.toBe(0);
    expect(r.stdout + r.stderr).toContain('IPv6 is not supported on your current network');
  });

  it('db query --remote --read-only, gen types --remote', async () => {
    const q = await supabase([
      'db',
      'query',
      '--remote',
      '--read-only',
      'select current_user as who, body from public.notes',
    ]);
    expect(q.code, show(q)).toBe(0);
    expect(q.stdout).toContain(`postgres.${ref}`);
    expect(q.stdout).toContain('first note');
    const types = await supabase(['gen', 'types', '--lang', 'typescript', '--remote']);
    expect(types.code, show(types)).toBe(0);
    expect(types.stdout).toContain('notes: {');
  });

  it('functions new + functions deploy --use-api --yes: the template answers 200', async () => {
    const created = await supabase(['functions', 'new', 'hello']);
    expect(created.code, show(created)).toBe(0);
    const source = readFileSync(join(workdir, 'supabase/functions/hello/index.ts'), 'utf8');
    expect(source).toContain('import "@supabase/functions-js/edge-runtime.d.ts"');
    const deployed = await supabase(['functions', 'deploy', 'hello', '--use-api', '--yes']);
    expect(deployed.code, show(deployed)).toBe(0);
    const res = await invokeFunction(tp, ref, 'hello', {
      method: 'POST',
      headers: { apikey: anonKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Functions' }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toEqual({ message: 'Hello Functions!' });
  });

  it('secrets set --yes: the function sees it', async () => {
    const set = await supabase(['secrets', 'set', 'GREETING=Bonjour', '--yes']);
    expect(set.code, show(set)).toBe(0);
    const file = join(workdir, 'supabase/functions/hello/index.ts');
    writeFileSync(
      file,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the function's source text
      readFileSync(file, 'utf8').replace('`Hello ${name}!`', '`${Deno.env.get("GREETING")} ${name}!`'),
    );
    const deployed = await supabase(['functions', 'deploy', 'hello', '--use-api', '--yes']);
    expect(deployed.code, show(deployed)).toBe(0);
    const res = await invokeFunction(tp, ref, 'hello', {
      method: 'POST',
      headers: { apikey: anonKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Functions' }),
    });
    expect(await res.json()).toEqual({ message: 'Bonjour Functions!' });
  });

  it('no command printed a deprecation warning', () => {
    for (const out of outputs) expect(out).not.toMatch(/deprecat/i);
  });
});
