/**
 * Function → host (issue 29, item 2), written as a project owner with a token and as the function
 * they deploy: a secret name becomes a variable of the Deno worker's process, so names that steer
 * the loader (LD_PRELOAD: native code as the worker's user, outside the Deno sandbox), the runtime
 * (NODE_OPTIONS, DENO_*), the process (PATH, HOME, TMPDIR) or its network/TLS are refused with 400,
 * through the bulk endpoint the CLI's `secrets set` and `--env-file` both use; a worker gets only
 * its function's secrets and the SUPABASE_* values (even for a name stored before the rule), runs
 * unprivileged when the platform is root, and reaches nothing of the host Deno does not allow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { configFromEnv } from '../../src/config.js';
import type { FunctionWorker } from '../../src/functions/worker.js';
import { upsertSecrets } from '../../src/management/secrets/service.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { api } from '../support/management.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { deployOne, invokeFunction } from '../support/functions.js';

let tp: TestPlatform;
let ctx: ProjectContext;

/** What the worker's process looks like from inside: environment and what it may reach. */
const PROBE = `
const tryIt = async (f) => { try { return 'allowed: ' + String(await f()).slice(0, 40); } catch (e) { return String(e).slice(0, 80); } };
Deno.serve(async () => Response.json({
  env: Deno.env.toObject(),
  run: await tryIt(() => new Deno.Command('/bin/sh', { args: ['-c', 'id'] }).output().then((o) => o.code)),
  readProc: await tryIt(() => Deno.readTextFile('/proc/self/environ')),
  readPasswd: await tryIt(() => Deno.readTextFile('/etc/passwd')),
  readFunctionsRoot: await tryIt(() => Deno.readDir(Deno.env.get('TMPDIR') + '/..')[Symbol.asyncIterator]().next()),
  writeOutside: await tryIt(() => Deno.writeTextFile('/tmp/strata-fn-escape', 'x')),
  ffi: await tryIt(() => Deno.dlopen('libc.so.6', {})),
  sys: await tryIt(() => Deno.uid()),
  metadata: await tryIt(() => fetch('http://169.254.169.254/latest/meta-data/', { signal: AbortSignal.timeout(2000) }).then((r) => r.status)),
  metadataGcp: await tryIt(() => fetch('http://metadata.google.internal/computeMetadata/v1/', { signal: AbortSignal.timeout(2000) }).then((r) => r.status)),
}));`;

async function setSecrets(secrets: Array<{ name: string; value: string }>) {
  return api(tp, 'POST', `/v1/projects/${ctx.ref}/secrets`, { body: secrets });
}

async function secretNames(): Promise<string[]> {
  const r = await api(tp, 'GET', `/v1/projects/${ctx.ref}/secrets`);
  return r.body.map((s: { name: string }) => s.name);
}

async function probe(): Promise<Record<string, unknown> & { env: Record<string, string> }> {
  const res = await invokeFunction(tp, ctx.ref, 'probe', { method: 'POST' });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text);
}

function workers(): FunctionWorker[] {
  const runtime = tp.functions.runtime as unknown as {
    pools: Map<string, FunctionWorker[]>;
  };
  return [...runtime.pools.values()].flat().filter((w) => w.alive);
}

beforeAll(async () => {
  // A variable of the platform's own process: it must never reach a function.
  process.env.STRATA_TEST_PLATFORM_ONLY = 'platform-only-value';
  tp = await startTestPlatform({ functions: { ...configFromEnv({}).functions, prewarm: false } });
  ctx = await tp.platform.defaultProject();
  const d = await deployOne(tp, ctx.ref, 'probe', PROBE, { verify_jwt: false });
  expect(d.status, JSON.stringify(d.body)).toBe(201);
});

afterAll(async () => {
  delete process.env.STRATA_TEST_PLATFORM_ONLY;
  await tp?.close();
});

describe('secret names that would steer the worker process are refused (400), nothing stored', () => {
  // The two exploits, then the classes they stand for.
  const refused = [
    'LD_PRELOAD',
    'NODE_OPTIONS',
    'ld_preload',
    'LD_LIBRARY_PATH',
    'LD_AUDIT',
    'DENO_DIR',
    'DENO_CERT',
    'DENO_TLS_CA_STORE',
    'DENO_AUTH_TOKENS',
    'NODE_EXTRA_CA_CERTS',
    'PATH',
    'HOME',
    'TMPDIR',
    'SSL_CERT_FILE',
    'SSLKEYLOGFILE',
    'HTTP_PROXY',
    'https_proxy',
    'GLIBC_TUNABLES',
    'GCONV_PATH',
    'NPM_CONFIG_REGISTRY',
    'RUST_LOG',
  ];
  for (const name of refused)
    it(name, async () => {
      const r = await setSecrets([{ name, value: '/tmp/evil.so' }]);
      expect(r.status, r.text).toBe(400);
      expect(r.body.message).toContain(name);
      expect(await secretNames()).not.toContain(name);
    });

  it('names that are not identifiers: "=", NUL, newline, space, dash, a leading digit, non-ASCII', async () => {
    for (const name of [
      'A=B',
      'LD_PRELOAD=/x.so',
      'A\u0000B',
      'A\nB',
      'A B',
      'MY-KEY',
      '1ABC',
      'ÄPFEL',
      '=',
    ]) {
      const r = await setSecrets([{ name, value: 'x' }]);
      expect(r.status, JSON.stringify(name)).toBe(400);
      expect(r.body.message, JSON.stringify(name)).toMatch(/identifier|NUL/);
    }
    const names = await secretNames();
    expect(names.some((n) => /[^A-Za-z0-9_]/.test(n))).toBe(false);
  });

  it('a value with NUL is refused (it could not be passed to the process)', async () => {
    const r = await setSecrets([{ name: 'NUL_VALUE', value: 'a\u0000b' }]);
    expect(r.status).toBe(400);
    expect(await secretNames()).not.toContain('NUL_VALUE');
  });

  it('the CLI bulk body (as `secrets set A=1 LD_PRELOAD=…` or an --env-file sends it): all refused when one is', async () => {
    const r = await setSecrets([
      { name: 'FROM_ENV_FILE', value: '1' },
      { name: 'LD_PRELOAD', value: '/tmp/x/evil.so' },
      { name: 'ANOTHER', value: '2' },
    ]);
    expect(r.status).toBe(400);
    const names = await secretNames();
    expect(names).not.toContain('FROM_ENV_FILE');
    expect(names).not.toContain('LD_PRELOAD');
  });

  it('ordinary names are still accepted (lower case, digits, underscores, SUPABASE-like lower case)', async () => {
    const r = await setSecrets([
      { name: 'STRIPE_KEY', value: 'a' },
      { name: '_private', value: 'b' },
      { name: 'openai_key2', value: 'c' },
      { name: 'PATH_PREFIX', value: 'd' },
      { name: 'MY_HOME', value: 'e' },
    ]);
    expect(r.status, r.text).toBe(201);
  });
});

describe("the worker's process", () => {
  it('holds only the function secrets and SUPABASE_* (a name stored before the rule is left out)', async () => {
    // Straight into the store, as a database from before this rule might hold them.
    await upsertSecrets(tp.platform, ctx.ref, [
      { name: 'LD_PRELOAD', value: '/nonexistent/evil.so' },
      { name: 'NODE_OPTIONS', value: '--require /tmp/evil.js' },
      { name: 'DENO_CERT', value: '/tmp/evil.pem' },
      { name: 'HTTP_PROXY', value: 'http://127.0.0.1:9' },
      { name: 'BAD=NAME', value: 'x' },
      { name: 'GOOD_ONE', value: 'kept' },
    ]);
    const p = await probe();
    const names = Object.keys(p.env).sort();
    expect(p.env.GOOD_ONE).toBe('kept');
    for (const n of names)
      expect(n, n).toMatch(/^(SUPABASE_(URL|ANON_KEY|SERVICE_ROLE_KEY|DB_URL)|TMPDIR|[A-Za-z_]\w*)$/);
    for (const bad of ['LD_PRELOAD', 'NODE_OPTIONS', 'DENO_CERT', 'HTTP_PROXY', 'BAD', 'BAD=NAME'])
      expect(names, bad).not.toContain(bad);
    // Never the runtime's settings nor anything of the platform's own environment.
    expect(names.filter((n) => n.startsWith('DENO_') || n === 'PATH' || n === 'HOME' || n === 'PWD')).toEqual(
      [],
    );
    expect(names).not.toContain('STRATA_TEST_PLATFORM_ONLY');
    expect(JSON.stringify(p.env)).not.toContain('platform-only-value');
    expect(JSON.stringify(p.env)).not.toContain(tp.platform.state.platformKey);
    // Exactly: the user's secrets, the six SUPABASE_ values and TMPDIR (its temp folder).
    const secrets = (await secretNames()).filter((n) => !n.startsWith('SUPABASE_'));
    const expected = new Set([
      ...secrets,
      'SUPABASE_DB_URL',
      'SUPABASE_URL',
      'SUPABASE_ANON_KEY',
      'SUPABASE_SERVICE_ROLE_KEY',
      // The CLI template's @supabase/server reads the new-style key sets (anon / service_role here).
      'SUPABASE_PUBLISHABLE_KEYS',
      'SUPABASE_SECRET_KEYS',
      'TMPDIR',
    ]);
    for (const bad of ['LD_PRELOAD', 'NODE_OPTIONS', 'DENO_CERT', 'HTTP_PROXY', 'BAD=NAME'])
      expected.delete(bad);
    expect(names).toEqual([...expected].sort());
  });

  it('the operating system environment of the process has no loader/runtime variable either', async () => {
    await probe();
    const [w] = workers();
    expect(w?.child.pid).toBeDefined();
    const environ = readFileSync(`/proc/${w?.child.pid}/environ`, 'latin1').split('\0');
    expect(environ.filter((e) => /^(LD_|NODE_OPTIONS|HTTP_PROXY|DENO_CERT|BAD=)/.test(e))).toEqual([]);
    expect(environ.some((e) => e.startsWith('STRATA_TEST_PLATFORM_ONLY'))).toBe(false);
  });

  it.runIf(process.getuid?.() === 0)('runs as an unprivileged user when the platform is root', async () => {
    await probe();
    const [w] = workers();
    const status = readFileSync(`/proc/${w?.child.pid}/status`, 'latin1');
    const uids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status);
    expect(Number(uids?.[1])).not.toBe(0);
    expect(Number(uids?.[2])).not.toBe(0);
    expect(Number(uids?.[3])).not.toBe(0);
  });

  it('reaches nothing of the host: no subprocess, no FFI, no files outside its bundle and temp folder (guards), no cloud metadata', async () => {
    const p = await probe();
    for (const k of [
      'run',
      'readProc',
      'readPasswd',
      'readFunctionsRoot',
      'writeOutside',
      'ffi',
      'sys',
      'metadata',
      'metadataGcp',
    ])
      expect(p[k], k).toMatch(/NotCapable|PermissionDenied/);
  });
});
