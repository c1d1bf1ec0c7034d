/**
 * Function resources (issue 29, item 4), written as a deployed function: the memory limit used to
 * count V8's heap only (ten 100 MiB Uint8Arrays or a 1 GiB WebAssembly.Memory were answered 200
 * at 2 GB RSS), and temp files had no quota on the file system PostgreSQL writes to. Now all of a
 * worker's resident memory counts (546 WORKER_LIMIT), one file larger than the temp space fails to
 * write inside the function, and more in total ends the worker (546).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { configFromEnv } from '../../src/config.js';
import type { FunctionWorker } from '../../src/functions/worker.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { deployOne, invokeFunction } from '../support/functions.js';
import { eventually } from '../support/eventually.js';

let tp: TestPlatform;
let ctx: ProjectContext;

const FUNCTIONS: Record<string, string> = {
  // Memory outside the V8 heap: ArrayBuffer backing stores, filled so they are resident.
  arrays: `Deno.serve(() => {
    const keep = [];
    for (let i = 0; i < 10; i++) keep.push(new Uint8Array(100 * 1024 * 1024).fill(1));
    return Response.json({ held: keep.length });
  });`,
  wasm: `Deno.serve(() => {
    const mem = new WebAssembly.Memory({ initial: 1, maximum: 16384 });
    mem.grow(16383);
    const bytes = new Uint8Array(mem.buffer);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = 1;
    return Response.json({ bytes: bytes.length });
  });`,
  // Answers at once, then grows in the background (no request in flight). The work starts a second
  // later: the answer is written by the same thread, which a busy loop would hold up on a loaded
  // machine (the request would then end with the worker, 546, rather than answer).
  background: `const keep = [];
  Deno.serve(() => {
    setTimeout(() => { for (let i = 0; i < 6; i++) keep.push(new Uint8Array(100 * 1024 * 1024).fill(1)); }, 1000);
    return Response.json({ pid: Deno.pid });
  });`,
  // Answers at once, then busy-loops in the background for 2 minutes (no request in flight; from a
  // second later, as above).
  spin: `Deno.serve(() => {
    setTimeout(() => { const end = Date.now() + 120_000; while (Date.now() < end) {} }, 1000);
    return new Response('answered');
  });`,
  // Within the limit: 20 MiB of buffers answers normally.
  modest: `Deno.serve(() => Response.json({ n: new Uint8Array(20 * 1024 * 1024).fill(1).length }));`,
  tmp: `Deno.serve(async (req) => {
    const q = new URL(req.url).searchParams;
    const dir = Deno.env.get('TMPDIR');
    const mb = Number(q.get('mb'));
    const files = Number(q.get('files') ?? 1);
    const chunk = new Uint8Array(1024 * 1024).fill(7);
    let error = null;
    let written = 0;
    try {
      for (let f = 0; f < files; f++) {
        const file = await Deno.open(dir + '/f' + f, { create: true, write: true, truncate: true });
        try { for (let i = 0; i < mb; i++) written += await file.write(chunk); } finally { file.close(); }
      }
    } catch (e) { error = String(e); }
    if (q.has('linger')) await new Promise((r) => setTimeout(r, Number(q.get('linger'))));
    return Response.json({ error, written });
  });`,
};

function call(slug: string, query = ''): Promise<Response> {
  return invokeFunction(tp, ctx.ref, `${slug}${query}`);
}

function workersOf(slug: string): FunctionWorker[] {
  const runtime = tp.functions.runtime as unknown as {
    pools: Map<string, FunctionWorker[]>;
  };
  return runtime.pools.get(`${ctx.ref}/${slug}`) ?? [];
}

beforeAll(async () => {
  tp = await startTestPlatform({
    functions: {
      ...configFromEnv({}).functions,
      prewarm: false,
      memoryMb: 64,
      tmpMb: 32,
      cpuBudgetMs: 2_000,
      requestTimeoutMs: 20_000,
    },
  });
  ctx = await tp.platform.defaultProject();
  const deployed = await Promise.all(
    Object.entries(FUNCTIONS).map(([slug, src]) => deployOne(tp, ctx.ref, slug, src, { verify_jwt: false })),
  );
  for (const d of deployed) expect(d.status, JSON.stringify(d.body)).toBe(201);
});

afterAll(async () => {
  await tp?.close();
});

describe('memory: all of a worker counts, not only the V8 heap', () => {
  it('ten filled 100 MiB Uint8Arrays → 546 WORKER_LIMIT', async () => {
    const r = await call('arrays');
    expect(r.status, await r.clone().text()).toBe(546);
    expect(r.headers.get('sb-error-code')).toBe('WORKER_LIMIT');
  });

  it('a 1 GiB WebAssembly.Memory, touched → 546 WORKER_LIMIT', async () => {
    const r = await call('wasm');
    expect(r.status, await r.clone().text()).toBe(546);
    expect(r.headers.get('sb-error-code')).toBe('WORKER_LIMIT');
  });

  it('memory grown after the answer (no request in flight) still ends the worker', async () => {
    const r = await call('background');
    expect(r.status).toBe(200);
    const [w] = workersOf('background');
    expect(w).toBeDefined();
    await eventually(() => !w?.alive, { timeoutMs: 15_000 });
    expect(w?.ended).toBe('memory');
  });

  it('a function within the limit is answered normally (guard)', async () => {
    const r = await call('modest');
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ n: 20 * 1024 * 1024 });
  });
});

describe('CPU: background work after the answer has the same budget', () => {
  it('a busy loop started after answering ends the worker (over the CPU budget)', {
    timeout: 90_000,
  }, async () => {
    const r = await call('spin');
    expect(r.status).toBe(200);
    const [w] = workersOf('spin');
    expect(w).toBeDefined();
    // (2 s of CPU: longer than that in wall-clock time on a loaded machine.)
    await eventually(() => !w?.alive, { timeoutMs: 80_000 });
    expect(w?.ended).toBe('cpu');
  });
});

describe('temp space is bounded per worker', () => {
  it('a file larger than the temp space fails to write inside the function (EFBIG), the worker goes on', async () => {
    const r = await call('tmp', '?mb=64');
    expect(r.status, await r.clone().text()).toBe(200);
    const body = await r.json();
    expect(body.error).toMatch(/File too large|os error 27/);
    expect(body.written).toBeLessThanOrEqual(32 * 1024 * 1024);
    // The same worker still answers.
    const again = await call('tmp', '?mb=1');
    expect(again.status, await again.clone().text()).toBe(200);
    expect((await again.json()).error).toBeNull();
  });

  it('more than the temp space in many files ends the worker with 546, and its folder is removed', async () => {
    const r = await call('tmp', '?mb=10&files=5&linger=3000');
    expect(r.status, await r.clone().text()).toBe(546);
    expect(r.headers.get('sb-error-code')).toBe('WORKER_LIMIT');
    const dirs = workersOf('tmp').map((w) => w.spec.tmpDir);
    await eventually(() => dirs.every((d) => !existsSync(d)), { timeoutMs: 3_000 }).catch(() => {});
    for (const d of dirs) expect(existsSync(d)).toBe(false);
  });
});
