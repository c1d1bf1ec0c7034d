/**
 * POST /v1/projects/{ref}/functions/{slug}/invoke, the console's request builder: the function is
 * called through the same route as any client (verify_jwt, roles), and its answer comes back as
 * data (status, headers, body as text or base64), never as the function's own response.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { deployOne } from '../support/functions.js';
import { api } from '../support/management.js';

let tp: TestPlatform;
let ctx: ProjectContext;

const WHO = `
Deno.serve(async (req) => {
  const auth = req.headers.get('authorization') ?? '';
  const payload = auth.startsWith('Bearer ')
    ? JSON.parse(atob(auth.slice(7).split('.')[1].replace(/-/g, '+').replace(/_/g, '/')))
    : null;
  const url = new URL(req.url);
  return Response.json({
    method: req.method,
    path: url.pathname,
    search: url.search,
    role: payload?.role ?? null,
    sub: payload?.sub ?? null,
    custom: req.headers.get('x-custom'),
    body: await req.text(),
  }, { headers: { 'x-answer': 'yes' } });
});`;

const HTML = `Deno.serve(() => new Response('<script>parent.stolen = localStorage</script>', {
  headers: { 'content-type': 'text/html' },
}));`;

/** 3 MiB of text, streamed in 64 KiB chunks. */
const LARGE = `Deno.serve(() => {
  let sent = 0;
  const chunk = new TextEncoder().encode('x'.repeat(65536));
  return new Response(new ReadableStream({
    pull(c) {
      if (sent >= 3 * 1024 * 1024) return c.close();
      sent += chunk.length;
      c.enqueue(chunk);
    },
  }), { headers: { 'content-type': 'text/plain' } });
});`;

const BYTES = `Deno.serve(() => new Response(new Uint8Array([0, 1, 2, 255]), {
  headers: { 'content-type': 'application/octet-stream' },
}));`;

const invoke = (slug: string, body: unknown, token?: string) =>
  api(tp, 'POST', `/v1/projects/${ctx.ref}/functions/${slug}/invoke`, { body, token });

beforeAll(async () => {
  tp = await startTestPlatform();
  ctx = await tp.platform.defaultProject();
  for (const [slug, src] of [
    ['who', WHO],
    ['page', HTML],
    ['bytes', BYTES],
    ['large', LARGE],
  ] as const)
    expect((await deployOne(tp, ctx.ref, slug, src)).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await tp?.close();
});

describe('function invoke (console request builder)', () => {
  it('calls the function as the chosen role, with method, path, query, headers and body', async () => {
    const r = await invoke('who', {
      method: 'POST',
      path: '/sub/path?x=1',
      headers: { 'x-custom': 'hi', authorization: 'Bearer forged' },
      body: '{"a":1}',
      role: 'authenticated',
      sub: '6f1c2b0e-3a4d-4e5f-8a9b-0c1d2e3f4a5b',
    });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe(200);
    expect(r.body.body_encoding).toBe('utf8');
    expect(r.body.truncated).toBe(false);
    expect(r.body.headers['x-answer']).toBe('yes');
    expect(typeof r.body.duration_ms).toBe('number');
    const seen = JSON.parse(r.body.body);
    expect(seen).toMatchObject({
      method: 'POST',
      path: '/who/sub/path',
      search: '?x=1',
      role: 'authenticated',
      sub: '6f1c2b0e-3a4d-4e5f-8a9b-0c1d2e3f4a5b',
      custom: 'hi',
      body: '{"a":1}',
    });
    for (const role of ['anon', 'service_role']) {
      const as = await invoke('who', { method: 'GET', role });
      expect(JSON.parse(as.body.body).role).toBe(role);
    }
  });

  it('cuts a large answer at 1 MiB and says so', async () => {
    const r = await invoke('large', { method: 'GET', role: 'anon' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe(200);
    expect(r.body.truncated).toBe(true);
    expect(r.body.body.length).toBe(1024 * 1024);
  });

  it("answers the function's HTML and bytes as data, not as a page", async () => {
    const page = await invoke('page', { method: 'GET', role: 'anon' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^application\/json/);
    expect(page.body.body).toContain('<script>');
    const bytes = await invoke('bytes', { method: 'GET', role: 'anon' });
    expect(bytes.body.body_encoding).toBe('base64');
    expect([...Buffer.from(bytes.body.body, 'base64')]).toEqual([0, 1, 2, 255]);
  });

  it("passes the function's own errors through as its status, and refuses bad input with 400", async () => {
    const missing = await invoke('nope', { method: 'GET', role: 'anon' });
    expect(missing.status).toBe(200);
    expect(missing.body.status).toBe(404);
    expect((await invoke('who', { method: 'TRACE', role: 'anon' })).status).toBe(400);
    expect((await invoke('who', { method: 'GET', role: 'postgres' })).status).toBe(400);
    expect((await invoke('who', { method: 'GET', role: 'anon', path: 'evil' })).status).toBe(400);
    expect(
      (await invoke('who', { method: 'GET', role: 'anon', path: '/../../v1/projects' })).body.status,
    ).not.toBe(200);
  });

  it('refuses NUL and control characters in the path and headers with 400, never 500', async () => {
    for (const bad of [
      { method: 'GET', role: 'anon', path: '/a\u0000b' },
      { method: 'GET', role: 'anon', path: '/a\u0007b' },
      { method: 'GET', role: 'anon', headers: { 'x-a': 'a\u0000b' } },
      { method: 'GET', role: 'anon', headers: { 'x-a': 'line\r\nx-injected: 1' } },
      { method: 'GET', role: 'anon', headers: { 'x a': 'v' } },
      { method: 'POST', role: 'anon', body: 42 },
      { method: 'GET', role: 'anon', sub: 'x'.repeat(10_000) },
    ]) {
      const r = await invoke('who', bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
    }
    // The Management API refuses NUL anywhere in a JSON body, the request's body text included.
    expect((await invoke('who', { method: 'POST', role: 'anon', body: 'a\u0000b' })).status).toBe(400);
  });

  it('needs a signed-in member', async () => {
    expect((await invoke('who', { method: 'GET', role: 'anon' }, 'sbp_' + '0'.repeat(40))).status).toBe(401);
  });
});
