/** /v1/projects/{ref}/functions (JSON, eszip and raw bodies), the runtime config, and supabase-management-js v2. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { SupabaseManagementAPI } from 'supabase-management-js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api, createOtherUser } from '../support/management.js';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const SOURCE = "Deno.serve(() => new Response('Hello, world!'))";

let tp: TestPlatform;
let ref: string;
let base: string;
beforeAll(async () => {
  tp = await startTestPlatform();
  ref = tp.platform.defaultRef;
  base = `/v1/projects/${ref}/functions`;
});
afterAll(async () => {
  await tp?.close();
});

async function upload(method: string, path: string, body: Buffer | string, contentType: string | undefined) {
  const headers: Record<string, string> = { authorization: `Bearer ${tp.platform.defaultAccessToken}` };
  if (contentType) headers['content-type'] = contentType;
  const res = await fetch(tp.url + path, {
    method,
    headers,
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text,
  };
}

describe('create (POST functions)', () => {
  it('JSON body: 201 with the function record (epoch-ms timestamps, version 1, ACTIVE, verify_jwt defaulting to true)', async () => {
    const before = Date.now();
    const r = await api(tp, 'POST', base, {
      body: { slug: 'hello-world', name: 'Hello World', body: SOURCE },
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      slug: 'hello-world',
      name: 'Hello World',
      status: 'ACTIVE',
      version: 1,
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      verify_jwt: true,
    });
    expect(r.body.created_at).toBeGreaterThanOrEqual(before - 5_000);
    expect(r.body.created_at).toBeLessThanOrEqual(Date.now() + 5_000);
  });

  it('takes verify_jwt and the other metadata from the JSON body or the query', async () => {
    const a = await api(tp, 'POST', base, {
      body: { slug: 'no-jwt', name: 'No JWT', body: SOURCE, verify_jwt: false },
    });
    expect(a.body.verify_jwt).toBe(false);
    const b = await api(
      tp,
      'POST',
      `${base}?verify_jwt=false&import_map=true&entrypoint_path=index.ts&import_map_path=import_map.json`,
      { body: { slug: 'with-query', name: 'Q', body: SOURCE } },
    );
    expect(b.status).toBe(201);
    expect(b.body).toMatchObject({
      verify_jwt: false,
      import_map: true,
      entrypoint_path: 'index.ts',
      import_map_path: 'import_map.json',
    });
  });

  it('a duplicate slug is refused with "Duplicated function slug"', async () => {
    const r = await api(tp, 'POST', base, { body: { slug: 'hello-world', name: 'again', body: SOURCE } });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('Duplicated function slug');
  });

  it('validates slug, name and body', async () => {
    for (const bad of [
      { name: 'n', body: SOURCE },
      { slug: '1starts-with-digit', name: 'n', body: SOURCE },
      { slug: 'has space', name: 'n', body: SOURCE },
      { slug: 'no-body', name: 'n' },
      { slug: 'bad-jwt', name: 'n', body: SOURCE, verify_jwt: 'yes' },
    ]) {
      const r = await api(tp, 'POST', base, { body: bad });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.message).toEqual(expect.any(String));
    }
    expect(
      (
        await api(tp, 'POST', `${base}?verify_jwt=maybe`, {
          body: { slug: 'q-bad', name: 'n', body: SOURCE },
        })
      ).status,
    ).toBe(400);
    expect(
      (await api(tp, 'POST', base, { rawBody: '{not json', headers: { 'content-type': 'application/json' } }))
        .status,
    ).toBe(400);
  });

  it('eszip body: stored as given; ezbr_sha256 from the query (or computed), name defaulting to the slug', async () => {
    const bundle = Buffer.concat([Buffer.from('EZBR'), randomBytes(2048)]);
    const digest = sha256(bundle);
    const q = `slug=bundled&verify_jwt=false&entrypoint_path=${encodeURIComponent('file:///home/me/supabase/functions/bundled/index.ts')}&ezbr_sha256=${digest}`;
    const r = await upload('POST', `${base}?${q}`, bundle, 'application/vnd.denoland.eszip');
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      slug: 'bundled',
      name: 'bundled',
      verify_jwt: false,
      version: 1,
      ezbr_sha256: digest,
      entrypoint_path: 'file:///home/me/supabase/functions/bundled/index.ts',
    });
    const body = await fetch(tp.url + `${base}/bundled/body`, {
      headers: { authorization: `Bearer ${tp.platform.defaultAccessToken}` },
    });
    expect(body.status).toBe(200);
    expect(body.headers.get('content-type')).toBe('application/vnd.denoland.eszip');
    expect(Buffer.from(await body.arrayBuffer()).equals(bundle)).toBe(true);

    const other = Buffer.concat([Buffer.from('EZBR'), randomBytes(100)]);
    const r2 = await upload('POST', `${base}?slug=bundled2`, other, 'application/vnd.denoland.eszip');
    expect(r2.body.ezbr_sha256).toBe(sha256(other));
  });

  it('raw (non-JSON) bodies are stored as given with their content type', async () => {
    const r = await upload('POST', `${base}?slug=raw-source&name=Raw`, SOURCE, 'application/typescript');
    expect(r.status).toBe(201);
    const res = await fetch(tp.url + `${base}/raw-source/body`, {
      headers: { authorization: `Bearer ${tp.platform.defaultAccessToken}` },
    });
    expect(res.headers.get('content-type')).toBe('application/typescript');
    expect(res.headers.get('x-body-sha256')).toBe(sha256(SOURCE));
    expect(await res.text()).toBe(SOURCE);
  });
});

describe('list, get (GET functions, GET functions/{slug})', () => {
  it('lists every function of the project', async () => {
    const r = await api(tp, 'GET', base);
    expect(r.status).toBe(200);
    const slugs = r.body.map((f: { slug: string }) => f.slug);
    expect(slugs).toEqual(
      expect.arrayContaining(['hello-world', 'no-jwt', 'with-query', 'bundled', 'bundled2', 'raw-source']),
    );
    for (const f of r.body) expect(f.status).toBe('ACTIVE');
  });

  it('get: 200, 404 "Function not found", 400 for a malformed slug', async () => {
    const r = await api(tp, 'GET', `${base}/hello-world`);
    expect(r.status).toBe(200);
    expect(r.body.slug).toBe('hello-world');
    const missing = await api(tp, 'GET', `${base}/nope`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: 'Function not found' });
    expect((await api(tp, 'GET', `${base}/bad.slug`)).status).toBe(400);
  });

  it('another user is refused; a missing token is 401', async () => {
    const other = await createOtherUser(tp, 'fn');
    expect((await api(tp, 'GET', base, { token: other.token })).status).toBe(403);
    expect((await api(tp, 'GET', base, { token: null })).status).toBe(401);
  });
});

describe('update (PATCH functions/{slug})', () => {
  it('bumps version on each update, keeps verify_jwt unless sent, refreshes updated_at', async () => {
    const before = (await api(tp, 'GET', `${base}/no-jwt`)).body;
    await new Promise((r) => setTimeout(r, 5));
    const r1 = await api(tp, 'PATCH', `${base}/no-jwt`, { body: { name: 'Renamed' } });
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({
      slug: 'no-jwt',
      name: 'Renamed',
      version: before.version + 1,
      verify_jwt: false,
      created_at: before.created_at,
    });
    expect(r1.body.updated_at).toBeGreaterThan(before.updated_at);
    const r2 = await api(tp, 'PATCH', `${base}/no-jwt`, {
      body: { body: "Deno.serve(() => new Response('v2'))" },
    });
    expect(r2.body).toMatchObject({ version: before.version + 2, verify_jwt: false });
    const src = await fetch(tp.url + `${base}/no-jwt/body`, {
      headers: { authorization: `Bearer ${tp.platform.defaultAccessToken}` },
    });
    expect(await src.text()).toBe("Deno.serve(() => new Response('v2'))");
    const r3 = await api(tp, 'PATCH', `${base}/no-jwt?verify_jwt=true`, { body: {} });
    expect(r3.body).toMatchObject({ version: before.version + 3, verify_jwt: true });
  });

  it('an eszip update replaces the bundle and its ezbr_sha256', async () => {
    const bundle = Buffer.concat([Buffer.from('EZBR'), randomBytes(300)]);
    const r = await upload(
      'PATCH',
      `${base}/bundled?ezbr_sha256=${sha256(bundle)}`,
      bundle,
      'application/vnd.denoland.eszip',
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: 2, ezbr_sha256: sha256(bundle), verify_jwt: false });
  });

  it('renames with the slug query parameter; 404 for a missing function; duplicate slug refused', async () => {
    await api(tp, 'POST', base, { body: { slug: 'to-rename', name: 'x', body: SOURCE } });
    const r = await api(tp, 'PATCH', `${base}/to-rename?slug=renamed`, { body: {} });
    expect(r.status).toBe(200);
    expect(r.body.slug).toBe('renamed');
    expect((await api(tp, 'GET', `${base}/to-rename`)).status).toBe(404);
    const dup = await api(tp, 'PATCH', `${base}/renamed?slug=hello-world`, { body: {} });
    expect(dup.status).toBe(400);
    expect(dup.body.message).toContain('Duplicated function slug');
    expect((await api(tp, 'PATCH', `${base}/nope`, { body: { name: 'n' } })).status).toBe(404);
  });
});

describe('body (GET functions/{slug}/body)', () => {
  it('Accept: multipart/form-data gives a metadata field and the source file', async () => {
    const r = await fetch(tp.url + `${base}/hello-world/body`, {
      headers: { authorization: `Bearer ${tp.platform.defaultAccessToken}`, accept: 'multipart/form-data' },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^multipart\/form-data; boundary=/);
    const form = await r.formData();
    expect(JSON.parse(String(form.get('metadata')))).toEqual({ deno2_entrypoint_path: 'index.ts' });
    const file = form.get('index.ts') as File;
    expect(file.name).toBe('index.ts');
    expect(await file.text()).toBe(SOURCE);
  });

  it('an eszip bundle cannot be served as multipart (400); missing function 404', async () => {
    const res = await fetch(tp.url + `${base}/bundled/body`, {
      headers: { authorization: `Bearer ${tp.platform.defaultAccessToken}`, accept: 'multipart/form-data' },
    });
    expect(res.status).toBe(400);
    expect((await api(tp, 'GET', `${base}/nope/body`)).status).toBe(404);
  });
});

describe('runtime config (non-spec)', () => {
  it("exposes the function's environment: the project's secrets (decrypted) and the platform-managed variables", async () => {
    expect(
      (
        await api(tp, 'POST', `/v1/projects/${ref}/secrets`, {
          body: [{ name: 'STRIPE_KEY', value: 'sk_live_123' }],
        })
      ).status,
    ).toBe(201);
    const r = await api(tp, 'GET', `${base}/hello-world/runtime-config`);
    expect(r.status).toBe(200);
    const ctx = await tp.platform.defaultProject();
    expect(r.body).toMatchObject({
      slug: 'hello-world',
      version: 1,
      verify_jwt: true,
      entrypoint: 'index.ts',
      body_sha256: sha256(SOURCE),
    });
    expect(r.body.env).toMatchObject({
      STRIPE_KEY: 'sk_live_123',
      SUPABASE_ANON_KEY: ctx.anonKey,
      SUPABASE_SERVICE_ROLE_KEY: ctx.serviceRoleKey,
      SUPABASE_URL: `http://${ref}.localhost:${tp.port}`,
    });
    expect((await api(tp, 'GET', `${base}/nope/runtime-config`)).status).toBe(404);
  });
});

describe('delete (DELETE functions/{slug})', () => {
  it('200 {"message":"ok"}, then 404', async () => {
    const r = await api(tp, 'DELETE', `${base}/renamed`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ message: 'ok' });
    expect((await api(tp, 'DELETE', `${base}/renamed`)).status).toBe(404);
    expect((await api(tp, 'GET', `${base}/renamed`)).status).toBe(404);
  });
});

describe('supabase-management-js v2', () => {
  it('createAFunction (JSON without a content type) → listAllFunctions → getAFunction → updateAFunction → getAFunctionBody → deleteAFunction', async () => {
    const client = new SupabaseManagementAPI({
      accessToken: tp.platform.defaultAccessToken,
      baseUrl: tp.url,
    });
    const created = await client.createAFunction(ref, {
      slug: 'sdk-fn',
      name: 'SDK',
      body: SOURCE,
      verify_jwt: false,
    });
    expect(created.status).toBe(201);
    expect(created.data).toMatchObject({
      slug: 'sdk-fn',
      name: 'SDK',
      version: 1,
      verify_jwt: false,
      status: 'ACTIVE',
    });
    expect((await client.listAllFunctions(ref)).data.map((f) => f.slug)).toContain('sdk-fn');
    expect((await client.getAFunction(ref, 'sdk-fn')).data.name).toBe('SDK');
    const updated = await client.updateAFunction(ref, 'sdk-fn', {
      body: 'Deno.serve(() => new Response("sdk v2"))',
    });
    expect(updated.status).toBe(200);
    expect(updated.data).toMatchObject({ version: 2, verify_jwt: false });
    const body = await client.getAFunctionBody(ref, 'sdk-fn');
    expect(body.status).toBe(200);
    expect(body.data).toBe('Deno.serve(() => new Response("sdk v2"))');
    expect((await client.deleteAFunction(ref, 'sdk-fn')).status).toBe(200);
    await expect(client.getAFunction(ref, 'sdk-fn')).rejects.toThrow('Function not found');
  });
});
