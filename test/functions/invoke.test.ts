/**
 * Edge Functions deployed through the Management API and invoked at {project}/functions/v1/{slug}
 * with the real clients (@supabase/functions-js, supabase-js's functions.invoke): streaming,
 * environment and secrets, JWT checks, limits (timeout, CPU), crashes, body limits, logs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FunctionsClient, FunctionsHttpError } from '@supabase/functions-js';
import { createClient } from '@supabase/supabase-js';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { configFromEnv } from '../../src/config.js';
import { signJwt } from '../../src/auth/jwt.js';
import { withClient } from '../../src/db/pool.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api } from '../support/management.js';
import { deploy, deployOne, invokeFunction } from '../support/functions.js';

let tp: TestPlatform;
let ctx: ProjectContext;
let base: string;
let fns: FunctionsClient;

const ECHO = `
Deno.serve(async (req) => {
  const url = new URL(req.url);
  const text = await req.text();
  return Response.json({
    method: req.method,
    path: url.pathname,
    search: url.search,
    body: text ? JSON.parse(text) : null,
    contentType: req.headers.get('content-type'),
  });
});`;

const SSE = `
Deno.serve(() => {
  let i = 0;
  const enc = new TextEncoder();
  const body = new ReadableStream({
    async pull(c) {
      if (i === 3) return c.close();
      await new Promise((r) => setTimeout(r, 50));
      c.enqueue(enc.encode('data: ' + JSON.stringify({ n: i++ }) + '\\n\\n'));
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
});`;

const ENV = `
async function attempt(f) {
  try { await f(); return 'allowed'; } catch (e) { return e?.name ?? String(e); }
}
Deno.serve(async () => {
  console.log('env function called');
  return Response.json({
    secret: Deno.env.get('MY_SECRET') ?? null,
    url: Deno.env.get('SUPABASE_URL'),
    anon: Deno.env.get('SUPABASE_ANON_KEY')?.length > 0,
    service: Deno.env.get('SUPABASE_SERVICE_ROLE_KEY')?.length > 0,
    db: Deno.env.get('SUPABASE_DB_URL')?.startsWith('postgres'),
    envNames: Object.keys(Deno.env.toObject()).sort(),
    readEtc: await attempt(() => Deno.readTextFile('/etc/hostname')),
    readPlatform: await attempt(() => Deno.readTextFile(${JSON.stringify('PLATFORM_STATE')})),
    writeRoot: await attempt(() => Deno.writeTextFile('/tmp/strata-fn-escape', 'x')),
    writeTmp: await attempt(async () => {
      const f = await Deno.makeTempFile();
      await Deno.writeTextFile(f, 'ok');
    }),
    run: await attempt(() => new Deno.Command('/bin/true').output()),
  });
});`;

/** Queries the project database through SUPABASE_DB_URL as the caller's role and claims (RLS applies). */
const DB = `
import postgres from 'npm:postgres@3.4.9';
const sql = postgres(Deno.env.get('SUPABASE_DB_URL'), { max: 1, prepare: false });
Deno.serve(async (req) => {
  const token = (req.headers.get('authorization') ?? '').replace(/^Bearer /i, '');
  const claims = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
  const rows = await sql.begin(async (tx) => {
    await tx\`select set_config('role', \${claims.role}, true), set_config('request.jwt.claims', \${JSON.stringify(claims)}, true)\`;
    const who = await tx\`select current_user as role, auth.uid() as uid\`;
    const notes = await tx\`select body from public.notes order by body\`;
    return { who: who[0], notes: notes.map((r) => r.body) };
  });
  return Response.json(rows);
});`;

/** What SUPABASE_DB_URL's login is, and whether it reaches another database on the same server. */
const DB_REACH = `
import postgres from 'npm:postgres@3.4.9';
const own = Deno.env.get('SUPABASE_DB_URL');
async function attempt(url, query) {
  const sql = postgres(url, { max: 1, prepare: false, connect_timeout: 5, onnotice: () => {} });
  try { return { ok: await query(sql) }; }
  catch (e) { return { code: e.code ?? 'ERR', message: String(e.message) }; }
  finally { await sql.end({ timeout: 1 }).catch(() => {}); }
}
Deno.serve(async (req) => {
  const other = new URL(own);
  other.pathname = '/' + new URL(req.url).searchParams.get('db');
  return Response.json({
    self: await attempt(own, async (sql) => (await sql\`select current_user as role, session_user as login\`)[0]),
    superuser: await attempt(own, async (sql) => sql.begin(async (tx) => { await tx\`set local role postgres\`; return 'switched'; })),
    other: await attempt(other.href, async (sql) => (await sql\`select current_database() as db\`)[0]),
  });
});`;

const SLOW = `Deno.serve(async () => { await new Promise(() => {}); return new Response('never'); });`;

const LOOP = `
Deno.serve((req) => {
  if (new URL(req.url).searchParams.has('spin')) { for (;;) {} }
  return new Response('fresh');
});`;

const THROWS_AT_IMPORT = `
throw new Error('kaboom at import');
Deno.serve(() => new Response('unreachable'));`;

const THROWS_IN_HANDLER = `Deno.serve(() => { throw new Error('handler exploded'); });`;

const BIG = `
Deno.serve(() => {
  const chunk = new Uint8Array(64 * 1024).fill(97);
  let sent = 0;
  const body = new ReadableStream({
    pull(c) {
      if (sent >= 10 * 1024 * 1024) return c.close();
      c.enqueue(chunk);
      sent += chunk.length;
    },
  });
  return new Response(body, { headers: { 'content-type': 'application/octet-stream' } });
});`;

beforeAll(async () => {
  tp = await startTestPlatform({
    functions: {
      ...configFromEnv({}).functions,
      requestTimeoutMs: 10_000,
      cpuBudgetMs: 500,
      bodyLimit: 1024 * 1024,
    },
  });
  ctx = await tp.platform.defaultProject();
  base = `${tp.url}/project/${ctx.ref}`;
  fns = new FunctionsClient(`${base}/functions/v1`, { headers: { Authorization: `Bearer ${ctx.anonKey}` } });
  const env = ENV.replace('PLATFORM_STATE', `${tp.dataDir}/state.json`);
  const deployed = await Promise.all([
    deployOne(tp, ctx.ref, 'echo', ECHO),
    deployOne(tp, ctx.ref, 'open', ECHO, { verify_jwt: false }),
    deployOne(tp, ctx.ref, 'sse', SSE),
    deployOne(tp, ctx.ref, 'env', env),
    deployOne(tp, ctx.ref, 'slow', SLOW),
    deployOne(tp, ctx.ref, 'loop', LOOP),
    deployOne(tp, ctx.ref, 'boom', THROWS_AT_IMPORT),
    deployOne(tp, ctx.ref, 'oops', THROWS_IN_HANDLER),
    deployOne(tp, ctx.ref, 'big', BIG),
    deployOne(tp, ctx.ref, 'db', DB),
    deployOne(tp, ctx.ref, 'dbreach', DB_REACH),
  ]);
  for (const d of deployed) expect(d.status, JSON.stringify(d.body)).toBe(201);
});

afterAll(async () => {
  await tp?.close();
});

describe('deploy', () => {
  it('answers the function, and version goes up on every deploy', async () => {
    const first = await deployOne(tp, ctx.ref, 'versioned', `Deno.serve(() => new Response('v1'));`);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      slug: 'versioned',
      name: 'versioned',
      status: 'ACTIVE',
      version: 1,
      verify_jwt: true,
    });
    expect(
      await invokeFunction(tp, ctx.ref, 'versioned', {
        headers: { authorization: `Bearer ${ctx.anonKey}` },
      }).then((r) => r.text()),
    ).toBe('v1');
    const second = await deployOne(tp, ctx.ref, 'versioned', `Deno.serve(() => new Response('v2'));`);
    expect(second.body.version).toBe(2);
    // The running worker had the old code: the next call gets the new one.
    expect(
      await invokeFunction(tp, ctx.ref, 'versioned', {
        headers: { authorization: `Bearer ${ctx.anonKey}` },
      }).then((r) => r.text()),
    ).toBe('v2');
    const got = await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/versioned`);
    expect(got.text).toBe(JSON.stringify(second.body));
  });

  it('refuses an import that cannot be resolved, naming it, at deploy time', async () => {
    const res = await deployOne(
      tp,
      ctx.ref,
      'unresolved',
      `import './missing.ts';\nDeno.serve(() => new Response('x'));`,
    );
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('missing.ts');
    const remote = await deployOne(
      tp,
      ctx.ref,
      'unresolved',
      `import { x } from 'https://deno.invalid/x.ts';\nDeno.serve(() => new Response(x));`,
    );
    expect(remote.status).toBe(400);
    expect(remote.body.message).toContain('https://deno.invalid/x.ts');
    expect((await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/unresolved`)).status).toBe(404);
  });

  it('resolves relative imports among the uploaded files', async () => {
    const res = await deploy(tp, ctx.ref, 'multi', {
      'supabase/functions/multi/index.ts': `import { greet } from '../_shared/greet.ts';\nDeno.serve(() => new Response(greet('multi')));`,
      'supabase/functions/_shared/greet.ts': `export const greet = (n: string): string => 'hello ' + n;`,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { data, error } = await fns.invoke('multi');
    expect(error).toBeNull();
    expect(data).toBe('hello multi');
  });

  it('rejects bad uploads with 400', async () => {
    const url = `${tp.url}/v1/projects/${ctx.ref}/functions/deploy`;
    const auth = { authorization: `Bearer ${tp.platform.defaultAccessToken}` };
    for (const slug of ['..', 'a/b', 'a%2Fb', '']) {
      const res = await fetch(`${url}?slug=${slug}`, { method: 'POST', headers: auth, body: new FormData() });
      expect(res.status, slug).toBe(400);
    }
    const notForm = await fetch(`${url}?slug=x`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(notForm.status).toBe(400);
    const escaping = await deploy(
      tp,
      ctx.ref,
      'escape',
      { '../../etc/index.ts': 'Deno.serve(() => new Response())' },
      { entrypoint_path: '../../etc/index.ts' },
    );
    expect(escaping.status).toBe(400);
    const noEntry = await deploy(tp, ctx.ref, 'noentry', { 'supabase/functions/noentry/other.ts': '' });
    expect(noEntry.status).toBe(400);
    expect(noEntry.body.message.toLowerCase()).toContain('entrypoint');
  });
});

describe('invoke', () => {
  it('echoes JSON with functions-js (method, sub-path, query)', async () => {
    const { data, error } = await fns.invoke('echo', { body: { hello: 'world', n: 1 } });
    expect(error).toBeNull();
    expect(data).toEqual({
      method: 'POST',
      path: '/echo',
      search: '',
      body: { hello: 'world', n: 1 },
      contentType: 'application/json',
    });
    const sub = await invokeFunction(tp, ctx.ref, `echo/a/b%20c?x=1&y=two`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ctx.anonKey}`, 'content-type': 'application/json' },
      body: '[1,2]',
    });
    expect(sub.status).toBe(200);
    expect(await sub.json()).toMatchObject({
      method: 'PUT',
      path: '/echo/a/b%20c',
      search: '?x=1&y=two',
      body: [1, 2],
    });
  });

  it('echoes with supabase-js functions.invoke', async () => {
    // Node 20 has no global WebSocket: supabase-js's realtime client is handed `ws` (unused here).
    const supabase = createClient(base, ctx.anonKey, {
      auth: { persistSession: false, autoRefreshToken: false },
      realtime: { transport: createRequire(import.meta.url)('ws') },
    });
    const { data, error } = await supabase.functions.invoke('echo', { body: { via: 'supabase-js' } });
    expect(error).toBeNull();
    expect(data.body).toEqual({ via: 'supabase-js' });
  });

  it('streams server-sent events as they are written', async () => {
    const res = await invokeFunction(tp, ctx.ref, 'sse', {
      headers: { authorization: `Bearer ${ctx.anonKey}` },
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const dec = new TextDecoder();
    // The first event arrives on its own, before the stream has ended.
    const first = await reader.read();
    expect(dec.decode(first.value)).toBe('data: {"n":0}\n\n');
    let rest = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += dec.decode(value);
    }
    expect(rest).toBe('data: {"n":1}\n\ndata: {"n":2}\n\n');
  });

  it('streams a 10 MB response', async () => {
    const res = await invokeFunction(tp, ctx.ref, 'big', {
      headers: { authorization: `Bearer ${ctx.anonKey}` },
    });
    expect(res.status).toBe(200);
    let total = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) total += chunk.length;
    expect(total).toBe(10 * 1024 * 1024);
  });

  it('gives secrets and the project variables in Deno.env, and nothing else', async () => {
    const set = await api(tp, 'POST', `/v1/projects/${ctx.ref}/secrets`, {
      body: [{ name: 'MY_SECRET', value: 's3cr3t' }],
    });
    expect(set.status).toBe(201);
    const { data, error } = await fns.invoke('env');
    expect(error).toBeNull();
    expect(data).toMatchObject({
      secret: 's3cr3t',
      url: `${base}`,
      anon: true,
      service: true,
      db: true,
      writeTmp: 'allowed',
    });
    // Not the runtime's own settings (DENO_*, NO_COLOR, PATH): see test/security/function-environment.test.ts.
    expect(data.envNames).toEqual([
      'MY_SECRET',
      'SUPABASE_ANON_KEY',
      'SUPABASE_DB_URL',
      'SUPABASE_PUBLISHABLE_KEYS',
      'SUPABASE_SECRET_KEYS',
      'SUPABASE_SERVICE_ROLE_KEY',
      'SUPABASE_URL',
      'TMPDIR',
    ]);
    for (const k of ['readEtc', 'readPlatform', 'writeRoot', 'run'])
      expect(data[k], k).toMatch(/NotCapable|PermissionDenied/);
    // A secret change recycles the running worker: the next call sees the new value.
    await api(tp, 'POST', `/v1/projects/${ctx.ref}/secrets`, {
      body: [{ name: 'MY_SECRET', value: 'rotated' }],
    });
    expect((await fns.invoke('env')).data.secret).toBe('rotated');
    const del = await api(tp, 'DELETE', `/v1/projects/${ctx.ref}/secrets`, { body: ['MY_SECRET'] });
    expect(del.status).toBe(200);
    const after = await fns.invoke('env');
    expect(
      after.error,
      String(await (after.error as FunctionsHttpError | null)?.context?.text?.()),
    ).toBeNull();
    expect(after.data.secret).toBeNull();
  });

  it('checks the JWT when verify_jwt is on, not when off', async () => {
    const raw = (path: string, headers: Record<string, string> = {}) =>
      invokeFunction(tp, ctx.ref, path, { method: 'POST', headers });
    const missing = await raw('echo');
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ code: 401, message: 'Missing authorization header' });
    const bad = await raw('echo', { authorization: 'Bearer not.a.jwt' });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ code: 401, message: 'Invalid JWT' });
    const forged = await signJwt('some-other-secret-that-is-long-enough-0123456789', {
      role: 'service_role',
    });
    expect((await raw('echo', { authorization: `Bearer ${forged}` })).status).toBe(401);
    const expired = await signJwt(ctx.jwtSecret, {
      role: 'authenticated',
      exp: Math.floor(Date.now() / 1000) - 10,
    });
    expect((await raw('echo', { authorization: `Bearer ${expired}` })).status).toBe(401);
    const user = await signJwt(
      ctx.jwtSecret,
      { role: 'authenticated', sub: '00000000-0000-0000-0000-000000000001' },
      { expiresInSeconds: 60 },
    );
    expect((await raw('echo', { authorization: `Bearer ${user}` })).status).toBe(200);
    expect((await raw('open')).status).toBe(200);
    // A CORS preflight reaches the function without a JWT.
    expect((await invokeFunction(tp, ctx.ref, 'echo', { method: 'OPTIONS' })).status).toBe(200);
    expect((await raw('open', { authorization: 'Bearer garbage' })).status).toBe(200);
  });

  it('answers 404 for unknown or removed functions, 503 when throttled, 400 for bad slugs', async () => {
    const auth = { authorization: `Bearer ${ctx.anonKey}` };
    const unknown = await invokeFunction(tp, ctx.ref, 'nope', { headers: auth });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ code: 'NOT_FOUND', message: 'Requested function was not found' });
    await deployOne(tp, ctx.ref, 'statusy', `Deno.serve(() => new Response('ok'));`);
    await tp.platform.pool.query(
      `update edge_functions set status = 'THROTTLED' where project_ref = $1 and slug = 'statusy'`,
      [ctx.ref],
    );
    await api(tp, 'PATCH', `/v1/projects/${ctx.ref}/functions/statusy`, { body: { name: 'statusy' } });
    const throttled = await invokeFunction(tp, ctx.ref, 'statusy', { headers: auth });
    expect(throttled.status).toBe(503);
    await tp.platform.pool.query(
      `update edge_functions set status = 'REMOVED' where project_ref = $1 and slug = 'statusy'`,
      [ctx.ref],
    );
    await api(tp, 'PATCH', `/v1/projects/${ctx.ref}/functions/statusy`, { body: { name: 'statusy' } });
    expect((await invokeFunction(tp, ctx.ref, 'statusy', { headers: auth })).status).toBe(404);
    expect((await invokeFunction(tp, ctx.ref, `a%2Fb`, { headers: auth })).status).toBe(400);
    expect((await invokeFunction(tp, ctx.ref, `..%2E`, { headers: auth })).status).toBe(400);
    // A raw `..` segment, as a hostile client would send it.
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(base);
      const r = request(
        { host: u.hostname, port: u.port, path: `${u.pathname}/functions/v1/../v1/echo`, headers: auth },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      r.on('error', reject);
      r.end();
    });
    expect([400, 404]).toContain(status);
  });

  it('a function that throws at import deploys, answers 500 and logs the error', async () => {
    const { data, error } = await fns.invoke('boom');
    expect(data).toBeNull();
    expect(error).toBeInstanceOf(FunctionsHttpError);
    const res = (error as FunctionsHttpError).context as Response;
    expect(res.status).toBe(500);
    expect(res.headers.get('sb-error-code')).toBe('BOOT_ERROR');
    const logs = await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/boom/logs`);
    expect(logs.status).toBe(200);
    expect(JSON.stringify(logs.body.result)).toContain('kaboom at import');
    expect(logs.body.result).toContainEqual(expect.objectContaining({ type: 'invocation', status: 500 }));
  });

  it('a handler that throws answers 500 WORKER_ERROR and keeps serving', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await invokeFunction(tp, ctx.ref, 'oops', {
        headers: { authorization: `Bearer ${ctx.anonKey}` },
      });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({
        code: 'WORKER_ERROR',
        message: 'Function exited due to an error (please check logs)',
      });
    }
    const logs = await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/oops/logs`);
    expect(JSON.stringify(logs.body.result)).toContain('handler exploded');
  });

  it('a request over the wall-clock limit gets 504', async () => {
    const { error } = await fns.invoke('slow');
    const res = (error as FunctionsHttpError).context as Response;
    expect(res.status).toBe(504);
    expect(res.headers.get('sb-error-code')).toBe('IDLE_TIMEOUT');
  });

  it('an infinite loop is killed at the CPU budget (546) and the next request gets a fresh worker', async () => {
    const res = await invokeFunction(tp, ctx.ref, `loop?spin=1`, {
      headers: { authorization: `Bearer ${ctx.anonKey}` },
    });
    expect(res.status).toBe(546);
    expect(await res.json()).toMatchObject({ code: 'WORKER_LIMIT' });
    const next = await invokeFunction(tp, ctx.ref, 'loop', {
      headers: { authorization: `Bearer ${ctx.anonKey}` },
    });
    expect(next.status).toBe(200);
    expect(await next.text()).toBe('fresh');
    const logs = await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/loop/logs`);
    expect(JSON.stringify(logs.body.result)).toContain('CPU time limit');
  });

  it('a request body over the limit gets 413, declared or streamed', async () => {
    const auth = { authorization: `Bearer ${ctx.anonKey}` };
    const declared = await invokeFunction(tp, ctx.ref, 'open', {
      method: 'POST',
      headers: auth,
      body: new Uint8Array(2 * 1024 * 1024),
    });
    expect(declared.status).toBe(413);
    // Chunked, no content-length: cut off once the limit is passed.
    const chunk = new Uint8Array(256 * 1024);
    let n = 0;
    const stream = new ReadableStream({
      pull(c) {
        if (n++ >= 400) return c.close();
        c.enqueue(chunk);
      },
    });
    const streamed = await invokeFunction(tp, ctx.ref, 'open', {
      method: 'POST',
      headers: auth,
      body: stream,
      duplex: 'half',
    } as RequestInit).catch((e: Error) => e);
    if (!(streamed instanceof Error)) expect(streamed.status).toBe(413);
    // The platform still serves.
    expect((await invokeFunction(tp, ctx.ref, 'open')).status).toBe(200);
  });

  it('keeps per-project logs with each invocation status and console output', async () => {
    await fns.invoke('env');
    const logs = await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/env/logs?limit=50`);
    const entries = logs.body.result as Array<Record<string, unknown>>;
    expect(entries.some((e) => e.type === 'log' && e.message === 'env function called')).toBe(true);
    expect(
      entries.some((e) => e.type === 'invocation' && e.status === 200 && typeof e.duration_ms === 'number'),
    ).toBe(true);
    expect(entries.every((e) => e.function_slug === 'env')).toBe(true);
  });

  it('queries the project database through SUPABASE_DB_URL under RLS', async () => {
    const alice = '00000000-0000-0000-0000-00000000000a';
    const bob = '00000000-0000-0000-0000-00000000000b';
    await withClient(ctx.superuserUrl, async (c) => {
      await c.query(`create table public.notes (owner uuid not null, body text not null);
        alter table public.notes enable row level security;
        create policy own_notes on public.notes for select to authenticated using (owner = auth.uid());
        grant select on public.notes to authenticated;
        insert into public.notes values ('${alice}', 'alice 1'), ('${alice}', 'alice 2'), ('${bob}', 'bob 1');`);
    });
    const as = async (sub: string) => {
      const jwt = await signJwt(ctx.jwtSecret, { role: 'authenticated', sub }, { expiresInSeconds: 60 });
      const client = new FunctionsClient(`${base}/functions/v1`, {
        headers: { Authorization: `Bearer ${jwt}` },
      });
      const { data, error } = await client.invoke('db', { method: 'GET' });
      expect(error, String(await (error as FunctionsHttpError | null)?.context?.text?.())).toBeNull();
      return data;
    };
    expect(await as(alice)).toEqual({
      who: { role: 'authenticated', uid: alice },
      notes: ['alice 1', 'alice 2'],
    });
    expect(await as(bob)).toEqual({ who: { role: 'authenticated', uid: bob }, notes: ['bob 1'] });
    // The anon key's role has no policy: RLS hides every row.
    const { data } = await fns.invoke('db', { method: 'GET' });
    expect(data).toEqual({ who: { role: 'anon', uid: null }, notes: [] });
  });

  it("gives SUPABASE_DB_URL the project's own login, which reaches no other database", async () => {
    const other = await tp.platform.createProject({ name: 'neighbour', organizationId: 'default-org' });
    const { data, error } = await fns.invoke(`dbreach?db=${encodeURIComponent(other.dbName)}`, {
      method: 'GET',
    });
    expect(error).toBeNull();
    // Sessions start as the project's `postgres.<ref>`, as the hosted URL logs in as `postgres`.
    expect(data.self).toEqual({ ok: { role: `postgres.${ctx.ref}`, login: `strata_fn.${ctx.ref}` } });
    // 42501: permission denied to set role "postgres".
    expect(data.superuser.code).toBe('42501');
    // Another project's database on the same server: refused (no CONNECT, and pg_hba rejects it).
    expect(data.other.ok).toBeUndefined();
    expect(['28000', '42501']).toContain(data.other.code);
  });
});
