/**
 * Worker lifecycle and isolation: idle workers are reaped, closing the platform leaves no Deno
 * process behind, a function cannot read another project's files or secrets, and an eszip body
 * created through POST /v1/projects/{ref}/functions runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { configFromEnv } from '../../src/config.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api } from '../support/management.js';
import { deployOne, eszipOf, invokeFunction } from '../support/functions.js';
import { eventually } from '../support/eventually.js';

let tp: TestPlatform;
let a: ProjectContext;
let b: ProjectContext;

const PID = `Deno.serve(() => Response.json({ pid: Deno.pid }));`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function invoke(ctx: ProjectContext, slug: string, init: RequestInit = {}): Promise<Response> {
  return invokeFunction(tp, ctx.ref, slug, {
    ...init,
    headers: { authorization: `Bearer ${ctx.anonKey}`, ...(init.headers as Record<string, string>) },
  });
}

beforeAll(async () => {
  tp = await startTestPlatform({
    functions: { ...configFromEnv({}).functions, idleTimeoutMs: 1_500, memoryMb: 48 },
  });
  a = await tp.platform.defaultProject();
  b = await tp.platform.createProject({ name: 'other', organizationId: 'default-org' });
});

afterAll(async () => {
  await tp?.close();
});

describe('worker lifecycle', () => {
  it('reaps an idle worker; the next request starts a new one', async () => {
    expect((await deployOne(tp, a.ref, 'idle', PID)).status).toBe(201);
    const first = (await (await invoke(a, 'idle')).json()) as { pid: number };
    expect(alive(first.pid)).toBe(true);
    expect((await (await invoke(a, 'idle')).json()).pid).toBe(first.pid);
    await eventually(() => !alive(first.pid), { timeoutMs: 10_000, intervalMs: 100 });
    const second = (await (await invoke(a, 'idle')).json()) as { pid: number };
    expect(second.pid).not.toBe(first.pid);
  });

  it("a redeploy removes the previous version's files once its worker is gone", async () => {
    const slugDir = join(tp.dataDir, 'functions', 'bundles', a.ref, 'versions');
    const V1 = `Deno.serve(() => new Response('v1'));`;
    const V2 = `Deno.serve(() => new Response('v2'));`;
    expect((await deployOne(tp, a.ref, 'versions', V1)).status).toBe(201);
    expect(await (await invoke(a, 'versions')).text()).toBe('v1');
    const first = readdirSync(slugDir);
    expect(first).toHaveLength(1);
    expect((await deployOne(tp, a.ref, 'versions', V2)).status).toBe(201);
    expect(await (await invoke(a, 'versions')).text()).toBe('v2');
    const second = readdirSync(slugDir);
    expect(second).toHaveLength(1);
    expect(second[0]).not.toBe(first[0]);
  });

  it("deleting a project stops its workers and removes its functions' files", async () => {
    const doomed = await tp.platform.createProject({ name: 'doomed', organizationId: 'default-org' });
    expect((await deployOne(tp, doomed.ref, 'pid', PID)).status).toBe(201);
    const { pid } = (await (await invoke(doomed, 'pid')).json()) as { pid: number };
    expect(alive(pid)).toBe(true);
    expect((await api(tp, 'DELETE', `/v1/projects/${doomed.ref}`)).status).toBe(200);
    expect(alive(pid)).toBe(false);
    expect(existsSync(join(tp.dataDir, 'functions', 'bundles', doomed.ref))).toBe(false);
  });

  it("cannot read another project's files or secrets", async () => {
    await api(tp, 'POST', `/v1/projects/${a.ref}/secrets`, {
      body: [{ name: 'A_ONLY', value: 'secret-of-a' }],
    });
    expect((await deployOne(tp, a.ref, 'owner', `Deno.serve(() => new Response('a'));`)).status).toBe(201);
    expect((await invoke(a, 'owner')).status).toBe(200);
    const spy = `
Deno.serve(async (req) => {
  const path = new URL(req.url).searchParams.get('path');
  let read;
  try { read = await Deno.readTextFile(path); } catch (e) { read = e.name; }
  return Response.json({ read, secret: Deno.env.get('A_ONLY') ?? null });
});`;
    expect((await deployOne(tp, b.ref, 'spy', spy)).status).toBe(201);
    const bundles = `${tp.dataDir}/functions/bundles/${a.ref}/owner`;
    const { readdirSync } = await import('node:fs');
    const [sha] = readdirSync(bundles);
    const target = `${bundles}/${sha}/supabase/functions/owner/index.ts`;
    const res = await invoke(b, `spy?path=${encodeURIComponent(target)}`);
    expect(await res.json()).toEqual({ read: 'NotCapable', secret: null });
  });

  it('runs an eszip body created through POST /v1/projects/{ref}/functions', async () => {
    const eszip = await eszipOf({
      'file:///src/index.ts': `import { word } from './word.ts';\nDeno.serve(() => new Response(word));`,
      'file:///src/word.ts': `export const word: string = 'from eszip';`,
    });
    const res = await fetch(
      `${tp.url}/v1/projects/${a.ref}/functions?slug=zipped&name=zipped&entrypoint_path=file:///src/index.ts`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tp.platform.defaultAccessToken}`,
          'content-type': 'application/vnd.denoland.eszip',
        },
        body: new Blob([new Uint8Array(eszip)]),
      },
    );
    expect(res.status, await res.clone().text()).toBe(201);
    const out = await invoke(a, 'zipped');
    expect(out.status).toBe(200);
    expect(await out.text()).toBe('from eszip');
  });

  it('a truncated eszip body cannot take the server down: the parser runs in a worker thread', async () => {
    const eszip = await eszipOf({
      'file:///src/index.ts': `Deno.serve(() => new Response('${'x'.repeat(4000)}'));`,
    });
    // Cut inside the module sources: @deno/eszip's WebAssembly panics on this from a task of its
    // own (an uncaught RuntimeError in the calling thread).
    const cut = new Uint8Array(eszip).subarray(0, Math.floor(eszip.length * 0.8));
    const res = await fetch(
      `${tp.url}/v1/projects/${a.ref}/functions?slug=cut&name=cut&entrypoint_path=file:///src/index.ts`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tp.platform.defaultAccessToken}`,
          'content-type': 'application/vnd.denoland.eszip',
        },
        body: new Blob([cut]),
      },
    );
    expect(res.status, await res.clone().text()).toBe(201);
    const out = await invoke(a, 'cut');
    expect(out.status).toBe(503);
    expect(out.headers.get('sb-error-code')).toBe('BOOT_ERROR');
    const again = await invoke(a, 'zipped');
    expect(again.status).toBe(200);
    expect(await again.text()).toBe('from eszip');
  });

  it('a worker over its memory cap is killed: 546 WORKER_LIMIT, logged; the next request is served', async () => {
    const hog = `
Deno.serve((req) => {
  if (new URL(req.url).searchParams.has('hog')) {
    const keep = [];
    for (;;) keep.push(new Array(1e5).fill(1.5));
  }
  return new Response('fine');
});`;
    expect((await deployOne(tp, a.ref, 'hog', hog)).status).toBe(201);
    const res = await invoke(a, 'hog?hog=1');
    expect(res.status).toBe(546);
    expect(res.headers.get('sb-error-code')).toBe('WORKER_LIMIT');
    expect(await (await invoke(a, 'hog')).text()).toBe('fine');
    const logs = await api(tp, 'GET', `/v1/projects/${a.ref}/functions/hog/logs`);
    expect(JSON.stringify(logs.body.result)).toMatch(/memory limit reached|CPU time limit reached/);
  });

  it('a declared 100 MB body is refused with 413 before it is sent', async () => {
    expect(
      (
        await deployOne(
          tp,
          a.ref,
          'sink',
          `Deno.serve(async (r) => new Response(String((await r.arrayBuffer()).byteLength)));`,
        )
      ).status,
    ).toBe(201);
    const { request } = await import('node:http');
    const u = new URL(tp.url);
    const status = await new Promise<number>((resolve, reject) => {
      const r = request(
        {
          host: u.hostname,
          port: u.port,
          method: 'POST',
          path: `/project/${a.ref}/functions/v1/sink`,
          headers: { authorization: `Bearer ${a.anonKey}`, 'content-length': String(100 * 1024 * 1024) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
          r.destroy();
        },
      );
      r.on('error', reject);
      r.write(Buffer.alloc(64 * 1024));
    });
    expect(status).toBe(413);
    expect(await (await invoke(a, 'sink', { method: 'POST', body: 'abc' })).text()).toBe('3');
  });

  it('closing the platform kills every worker', async () => {
    expect((await deployOne(tp, a.ref, 'lasting', PID)).status).toBe(201);
    expect((await deployOne(tp, b.ref, 'lasting', PID)).status).toBe(201);
    const pids = [
      ((await (await invoke(a, 'lasting')).json()) as { pid: number }).pid,
      ((await (await invoke(b, 'lasting')).json()) as { pid: number }).pid,
    ];
    for (const pid of pids) expect(alive(pid)).toBe(true);
    await tp.app.close();
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });
});
