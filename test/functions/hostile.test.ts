/**
 * Hostile or broken input at the Edge Functions invocation route: odd slugs and sub-paths, odd
 * headers, oversized or abandoned bodies, misbehaving functions (malformed deploy uploads:
 * hostile-deploy.test.ts). Each ends in the documented error shape, and no worker lease,
 * connection or file is left behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { request } from 'node:http';
import { configFromEnv } from '../../src/config.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { deployOne, invokeFunction } from '../support/functions.js';
import { eventually } from '../support/eventually.js';
import { api } from '../support/management.js';

let tp: TestPlatform;
let ctx: ProjectContext;
let base: string;

const ECHO = `
Deno.serve(async (req) => {
  const url = new URL(req.url);
  const body = await req.text();
  return Response.json({ path: url.pathname, size: body.length, headers: [...req.headers].length });
});`;

const STREAM = `
Deno.serve((req) => {
  const fail = new URL(req.url).searchParams.has('fail');
  let i = 0;
  const body = new ReadableStream({
    async pull(c) {
      await new Promise((r) => setTimeout(r, 30));
      if (fail && i === 3) { c.error(new Error('broke mid-stream')); return; }
      if (i === 1000) return c.close();
      c.enqueue(new TextEncoder().encode('chunk ' + i++ + '\\n'));
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/plain' } });
});`;

const HUGE_HEADER = `Deno.serve(() => new Response('x', { headers: { 'x-huge': 'a'.repeat(128 * 1024) } }));`;

function stats(): { workers: number; inflight: number; connections: number } {
  return tp.functions.runtime.stats();
}

/** Sends raw bytes on a fresh connection; the whole answer (until the server closes, or ms). */
function rawExchange(bytes: string | Buffer, ms = 5_000): Promise<string> {
  const u = new URL(tp.url);
  return new Promise((resolve) => {
    const s = connect(Number(u.port), u.hostname);
    const got: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      s.destroy();
      resolve(Buffer.concat(got).toString('latin1'));
    };
    const timer = setTimeout(done, ms);
    s.on('data', (d) => got.push(d));
    s.on('close', done);
    s.on('error', done);
    s.write(bytes);
  });
}

function statusOf(answer: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
}

function bodyOf(answer: string): string {
  return answer.slice(answer.indexOf('\r\n\r\n') + 4);
}

function fnPath(rest: string): string {
  return `/project/${ctx.ref}/functions/v1/${rest}`;
}

beforeAll(async () => {
  tp = await startTestPlatform({
    functions: {
      ...configFromEnv({}).functions,
      requestTimeoutMs: 3_000,
      bodyLimit: 256 * 1024,
      poolSize: 2,
      workerConcurrency: 4,
      // Workers start on the first request, so "cold" means cold.
      prewarm: false,
    },
  });
  ctx = await tp.platform.defaultProject();
  base = `${tp.url}/project/${ctx.ref}`;
  const deployed = await Promise.all([
    deployOne(tp, ctx.ref, 'echo', ECHO, { verify_jwt: false }),
    deployOne(tp, ctx.ref, 'stream', STREAM, { verify_jwt: false }),
    deployOne(tp, ctx.ref, 'hugeheader', HUGE_HEADER, { verify_jwt: false }),
  ]);
  for (const d of deployed) expect(d.status, JSON.stringify(d.body)).toBe(201);
});

afterAll(async () => {
  await tp?.close();
});

describe('invocation: slug and sub-path', () => {
  it('answers 400 in the platform shape for NUL, dot-dot, bad escapes and over-long slugs', async () => {
    // Raw requests: fetch would resolve %2e%2e itself.
    for (const slug of ['ec%00ho', '%2e%2e', '%2E%2e%2Fecho', 'a'.repeat(129), 'a'.repeat(5000)]) {
      const answer = await rawExchange(
        `GET ${fnPath(slug)}/x HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`,
      );
      expect(statusOf(answer), slug.slice(0, 20)).toBe(400);
      expect(JSON.parse(bodyOf(answer)), slug.slice(0, 20)).toEqual({
        code: 'BAD_REQUEST',
        message: 'Invalid function slug',
      });
    }
    // A malformed escape (or invalid UTF-8) anywhere in the path is refused by the router itself
    // (400, Fastify's shape).
    for (const path of [fnPath('%zz'), fnPath('ec%C0ho'), fnPath('echo/a%zzb')])
      expect(
        statusOf(await rawExchange(`GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`)),
      ).toBe(400);
  });

  it('unknown slugs answer 404 and are not cached: made-up names cannot grow the platform', async () => {
    const catalog = tp.functions.catalog;
    const before = catalog.size;
    const u = new URL(tp.url);
    // One kept-alive connection, 300 made-up slugs.
    const answers = await new Promise<string>((resolve) => {
      const s = connect(Number(u.port), u.hostname);
      let got = '';
      s.on('data', (d) => {
        got += d.toString('latin1');
        if ((got.match(/HTTP\/1\.1 404/g) ?? []).length === 300) {
          s.destroy();
          resolve(got);
        }
      });
      for (let i = 0; i < 300; i++) s.write(`GET ${fnPath(`made-up-${i}`)} HTTP/1.1\r\nhost: x\r\n\r\n`);
    });
    expect(answers).toContain('"code":"NOT_FOUND"');
    expect(catalog.size).toBe(before);
  });

  it('reaches a function whose slug is 128 characters long', async () => {
    const slug = `s${'x'.repeat(127)}`;
    expect((await deployOne(tp, ctx.ref, slug, ECHO, { verify_jwt: false })).status).toBe(201);
    const res = await invokeFunction(tp, ctx.ref, `${slug}/sub`);
    expect(res.status).toBe(200);
    expect((await res.json()).path).toBe(`/${slug}/sub`);
  });

  it('forwards odd sub-paths (NUL, %2e%2e, long segments) to the function as sent', async () => {
    for (const sub of ['a%00b', '%2e%2e/%2e%2e/x', 'x'.repeat(8000), '..%2f..%2fx']) {
      const answer = await rawExchange(
        `GET ${fnPath(`echo/${sub}`)} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`,
      );
      expect(statusOf(answer), sub.slice(0, 20)).toBe(200);
      expect(typeof JSON.parse(bodyOf(answer)).path).toBe('string');
    }
    expect(stats().inflight).toBe(0);
  });
});

describe('invocation: headers', () => {
  it('answers 400 to a malformed Host header, which the worker would build its request URL from', async () => {
    for (const host of ['a b', '[::1', 'x:99999', '%00', 'x/y', 'x?y', 'x#y', 'x@y']) {
      const answer = await rawExchange(
        `GET ${fnPath('echo')} HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`,
      );
      expect(statusOf(answer), host).toBe(400);
      expect(JSON.parse(bodyOf(answer))).toEqual({ code: 'BAD_REQUEST', message: 'Invalid Host header' });
    }
    for (const host of ['', 'example.com:8080', '[::1]:54321', '127.0.0.1']) {
      const answer = await rawExchange(
        `GET ${fnPath('echo/p')} HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`,
      );
      expect(statusOf(answer), host).toBe(200);
      expect(JSON.parse(bodyOf(answer)).path).toBe('/echo/p');
    }
    expect(stats().inflight).toBe(0);
  });

  it('forwards header values with obs-text bytes', async () => {
    const answer = await rawExchange(
      Buffer.concat([
        Buffer.from(`GET ${fnPath('echo')} HTTP/1.1\r\nhost: x\r\nx-odd: `),
        Buffer.from([0xc3, 0xa9, 0xff, 0x80]),
        Buffer.from('\r\nconnection: close\r\n\r\n'),
      ]),
    );
    expect(statusOf(answer)).toBe(200);
  });

  it('answers 431 to more request headers than a worker accepts, and keeps serving', async () => {
    const head = (n: number) =>
      `GET ${fnPath('echo')} HTTP/1.1\r\nhost: x\r\n${Array.from({ length: n }, (_, i) => `x-h${i}: v\r\n`).join('')}connection: close\r\n\r\n`;
    const ok = await rawExchange(head(98));
    expect(statusOf(ok)).toBe(200);
    expect(JSON.parse(bodyOf(ok)).headers).toBeGreaterThanOrEqual(98);
    for (const n of [99, 130, 1500]) {
      const answer = await rawExchange(head(n));
      expect(statusOf(answer), String(n)).toBe(431);
      expect(JSON.parse(bodyOf(answer))).toEqual({
        code: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
        message: 'Request has too many header fields',
      });
    }
    expect((await invokeFunction(tp, ctx.ref, 'echo')).status).toBe(200);
    expect(stats().inflight).toBe(0);
  });
});

describe('invocation: sandbox', () => {
  it('a function cannot listen on every interface of the host (loopback stays allowed)', async () => {
    const src = `Deno.serve(() => {
      const tries = [{ port: 0 }, { hostname: '0.0.0.0', port: 0 }, { hostname: '::', port: 0 }, { hostname: '127.0.0.1', port: 0 }];
      return Response.json(tries.map((o) => {
        try { Deno.listen(o).close(); return 'listened'; } catch (e) { return e.name; }
      }));
    });`;
    expect((await deployOne(tp, ctx.ref, 'listener', src, { verify_jwt: false })).status).toBe(201);
    const res = await invokeFunction(tp, ctx.ref, 'listener');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(['NotCapable', 'NotCapable', 'NotCapable', 'listened']);
  });
});

describe('invocation: methods', () => {
  it('answers 405 in the platform shape to a method functions do not take', async () => {
    const answer = await rawExchange(
      `TRACE ${fnPath('echo')} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`,
    );
    expect(statusOf(answer)).toBe(405);
    expect(JSON.parse(bodyOf(answer))).toEqual({ code: 'METHOD_NOT_ALLOWED', message: 'Method not allowed' });
  });
});

describe('invocation: bodies and disconnects', () => {
  it('a chunked body over the limit gets 413 and the lease is released', async () => {
    const chunk = 'a'.repeat(16 * 1024);
    let req = `POST ${fnPath('echo')} HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n`;
    for (let i = 0; i < 40; i++) req += `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
    req += '0\r\n\r\n';
    const answer = await rawExchange(req);
    expect(statusOf(answer)).toBe(413);
    expect(JSON.parse(bodyOf(answer))).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    await eventually(() => stats().inflight === 0, { timeoutMs: 2_000 });
    expect((await invokeFunction(tp, ctx.ref, 'echo', { method: 'POST', body: 'ok' })).status).toBe(200);
  });

  it('a body over the limit still arriving after the function answered: no crash, lease released', async () => {
    expect(
      (
        await deployOne(tp, ctx.ref, 'early', `Deno.serve(() => new Response('early'));`, {
          verify_jwt: false,
        })
      ).status,
    ).toBe(201);
    expect((await deployOne(tp, ctx.ref, 'earlystream', STREAM, { verify_jwt: false })).status).toBe(201);
    for (const slug of ['early', 'earlystream']) {
      const u = new URL(tp.url);
      const answer = await new Promise<string>((resolve) => {
        const s = connect(Number(u.port), u.hostname);
        let got = '';
        s.on('data', (d) => {
          got += d.toString('latin1');
        });
        s.on('close', () => resolve(got));
        s.on('error', () => resolve(got));
        s.write(
          `POST ${fnPath(slug)} HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n`,
        );
        const chunk = 'a'.repeat(32 * 1024);
        let n = 0;
        const timer = setInterval(() => {
          if (n++ >= 20 || s.destroyed) {
            clearInterval(timer);
            if (!s.destroyed) s.end('0\r\n\r\n');
            return;
          }
          s.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
        }, 40);
      });
      expect(statusOf(answer), slug).toBeGreaterThan(0);
      await eventually(() => stats().inflight === 0, { timeoutMs: 2_000, what: slug });
    }
    // The streaming one was cut off at the limit: logged as 413, with no error of the platform's own.
    await new Promise((r) => setTimeout(r, 300));
    const logs = (await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/earlystream/logs`)).body;
    expect(logs.result).toContainEqual(expect.objectContaining({ type: 'invocation', status: 413 }));
    expect(JSON.stringify(logs.result)).not.toContain('invocation failed');
    expect((await invokeFunction(tp, ctx.ref, 'echo')).status).toBe(200);
  });

  it('a client that leaves mid-request-body releases its lease; the next request is served', async () => {
    const u = new URL(tp.url);
    await new Promise<void>((resolve) => {
      const s = connect(Number(u.port), u.hostname, () => {
        s.write(
          `POST ${fnPath('echo')} HTTP/1.1\r\nhost: x\r\ncontent-length: 100000\r\n\r\n${'a'.repeat(1000)}`,
        );
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 300);
      });
    });
    await eventually(() => stats().inflight === 0, { timeoutMs: 2_000 });
    const res = await invokeFunction(tp, ctx.ref, 'echo', { method: 'POST', body: 'x' });
    expect(res.status).toBe(200);
  });

  it('a client that leaves mid-response-stream releases its lease', async () => {
    const connectionsBefore = stats().connections;
    for (let i = 0; i < 10; i++)
      await new Promise<void>((resolve, reject) => {
        const r = request(`${base}/functions/v1/stream`, (res) => {
          res.once('data', () => {
            r.destroy();
            resolve();
          });
        });
        r.on('error', () => {});
        r.on('timeout', reject);
        r.end();
      });
    await eventually(() => stats().inflight === 0, { timeoutMs: 2_000 });
    // The aborted requests' connections to the worker are closed, not kept.
    await eventually(() => stats().connections <= connectionsBefore + 2, { timeoutMs: 2_000 });
    const res = await invokeFunction(tp, ctx.ref, 'echo');
    expect(res.status).toBe(200);
  });

  it('a client that leaves while a cold worker boots releases its lease once the worker is up', async () => {
    // Leave at several moments of the first request: record lookup, bundle write, worker boot.
    for (const [i, ms] of [1, 5, 15, 30, 60].entries()) {
      const slug = `coldstream${i}`;
      expect((await deployOne(tp, ctx.ref, slug, STREAM, { verify_jwt: false })).status).toBe(201);
      await rawExchange(`GET ${fnPath(slug)} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`, ms);
      await new Promise((r) => setTimeout(r, 300));
      await eventually(() => stats().inflight === 0, { timeoutMs: 1_500, what: `left after ${ms} ms` });
    }
    expect((await invokeFunction(tp, ctx.ref, 'echo')).status).toBe(200);
  });

  it('answers HEAD without a body, and a WebSocket upgrade request does not hang', async () => {
    const head = await rawExchange(`HEAD ${fnPath('echo')} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
    expect(statusOf(head)).toBe(200);
    expect(bodyOf(head)).toBe('');
    // Not upgraded (no WebSocket support): the function answers it as a plain request.
    const upgrade = await rawExchange(
      `GET ${fnPath('echo')} HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      1_000,
    );
    expect(statusOf(upgrade)).toBe(200);
    await eventually(() => stats().inflight === 0, { timeoutMs: 2_000 });
  });

  it('a client too slow to send its body or read the answer is cut off at the wall clock; the worker lives', async () => {
    const PID = `Deno.serve(async (req) => {
  const u = new URL(req.url);
  if (u.searchParams.has('big')) {
    const chunk = new Uint8Array(64 * 1024);
    let n = 0;
    return new Response(new ReadableStream({ pull(c) { if (n++ > 2000) c.close(); else c.enqueue(chunk); } }));
  }
  await req.text();
  return Response.json({ pid: Deno.pid });
});`;
    expect((await deployOne(tp, ctx.ref, 'pid', PID, { verify_jwt: false })).status).toBe(201);
    const pid = async () =>
      ((await (await invokeFunction(tp, ctx.ref, 'pid')).json()) as { pid: number }).pid;
    const first = await pid();
    const u = new URL(tp.url);
    // A body trickling in: 1 byte every 200 ms of a declared 1000.
    const slowBody = new Promise<string>((resolve) => {
      const s = connect(Number(u.port), u.hostname);
      let got = '';
      const tick = setInterval(() => s.write('a'), 200);
      const end = () => {
        clearInterval(tick);
        s.destroy();
        resolve(got);
      };
      s.on('data', (d) => {
        got += d.toString('latin1');
        if (got.includes('\r\n\r\n')) setTimeout(end, 100);
      });
      s.on('close', end);
      s.on('error', end);
      s.write(`POST ${fnPath('pid')} HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n`);
    });
    // An answer nobody reads.
    const s2 = connect(Number(u.port), u.hostname);
    s2.on('error', () => {});
    s2.write(`GET ${fnPath('pid?big=1')} HTTP/1.1\r\nhost: x\r\n\r\n`);
    s2.pause();
    const answer = await slowBody;
    expect(statusOf(answer)).toBe(408);
    expect(JSON.parse(bodyOf(answer))).toMatchObject({ code: 'REQUEST_TIMEOUT' });
    await eventually(() => stats().inflight === 0, { timeoutMs: 2_000 });
    s2.destroy();
    expect(await pid()).toBe(first);
  });

  it('a handler that returns no Response (or a used one) answers 500 WORKER_ERROR, saying why', async () => {
    const sources = {
      nrstring: `Deno.serve(() => 'not a response');`,
      nrundef: `Deno.serve(() => undefined);`,
      nrused: `Deno.serve(async () => { const r = new Response('x'); await r.text(); return r; });`,
    };
    for (const [slug, source] of Object.entries(sources)) {
      expect((await deployOne(tp, ctx.ref, slug, source, { verify_jwt: false })).status).toBe(201);
      const res = await invokeFunction(tp, ctx.ref, slug);
      expect(res.status, slug).toBe(500);
      expect(res.headers.get('sb-error-code'), slug).toBe('WORKER_ERROR');
      expect(await res.json()).toMatchObject({ code: 'WORKER_ERROR' });
    }
    await new Promise((r) => setTimeout(r, 300));
    const logs = (await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/nrstring/logs`)).body;
    expect(JSON.stringify(logs.result)).toContain('did not return a Response (got string)');
  });

  it('a function that errors mid-stream cuts the response off, and keeps serving', async () => {
    const res = await invokeFunction(tp, ctx.ref, `stream?fail=1`);
    expect(res.status).toBe(200);
    const text = await res.text().catch((e: Error) => `cut: ${e.message}`);
    expect(text).not.toContain('chunk 5');
    await eventually(() => stats().inflight === 0, { timeoutMs: 2_000 });
    expect((await invokeFunction(tp, ctx.ref, 'echo')).status).toBe(200);
  });

  it('a function that writes a huge header gets a platform error, not a hang', async () => {
    const started = Date.now();
    const res = await invokeFunction(tp, ctx.ref, 'hugeheader');
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(await res.json()).toMatchObject({ code: 'WORKER_ERROR' });
    expect(Date.now() - started).toBeLessThan(2_500);
    await eventually(() => stats().inflight === 0, { timeoutMs: 2_000 });
    // "please check logs": the logs say why.
    await new Promise((r) => setTimeout(r, 300));
    const logs = (await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/hugeheader/logs`)).body;
    expect(JSON.stringify(logs.result)).toMatch(/invocation failed: .*[Hh]eader/);
  });

  it('a function that writes a huge line without a newline does not grow the platform', async () => {
    const FLOOD = `Deno.serve(async () => {
  const chunk = new TextEncoder().encode('a'.repeat(64 * 1024));
  for (let i = 0; i < 3200; i++) await Deno.stdout.write(chunk);
  return new Response('flooded');
});`;
    expect((await deployOne(tp, ctx.ref, 'flood', FLOOD, { verify_jwt: false })).status).toBe(201);
    const before = process.memoryUsage().heapUsed;
    const res = await invokeFunction(tp, ctx.ref, 'flood');
    expect(await res.text()).toBe('flooded');
    // 200 MB written; the platform keeps the start of the line only.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(64 * 1024 * 1024);
  });

  it('a function printing a million lines is rate-limited: the platform stays responsive', async () => {
    const LINES = `Deno.serve(async () => {
  const lines = new TextEncoder().encode('x\\n'.repeat(32 * 1024));
  for (let i = 0; i < 30; i++) await Deno.stdout.write(lines);
  return new Response('lines');
});`;
    expect((await deployOne(tp, ctx.ref, 'lines', LINES, { verify_jwt: false })).status).toBe(201);
    const started = Date.now();
    expect(await (await invokeFunction(tp, ctx.ref, 'lines')).text()).toBe('lines');
    // Reading and logging ~1M lines one by one kept the event loop busy for over 10 s.
    expect(Date.now() - started).toBeLessThan(5_000);
    await new Promise((r) => setTimeout(r, 300));
    const logs = (await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/lines/logs?limit=1000`)).body;
    expect(JSON.stringify(logs.result)).toMatch(/console output over 1000 lines per second/);
  });

  it('many concurrent first requests to a cold function: bounded workers, all answered', async () => {
    expect((await deployOne(tp, ctx.ref, 'cold', ECHO, { verify_jwt: false })).status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => invokeFunction(tp, ctx.ref, 'cold').then((r) => r.status)),
    );
    expect(answers.every((s) => s === 200)).toBe(true);
    expect(stats().workers).toBeLessThanOrEqual(tp.config.functions.maxWorkers);
    await eventually(() => stats().inflight === 0, { timeoutMs: 2_000 });
  });
});
