/**
 * Storage input edges (issue 12 items 1 and 7): key segments over 255 bytes, invalid or foreign
 * tokens on every route that reads one, NUL bytes in keys, query strings, JSON bodies, metadata
 * and headers. Each answers a 4xx in the storage error shape, never a 500, never a silent anon.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { signJwt } from '../../src/auth/jwt.js';
import { bucketName, startStorage, type StorageHarness } from '../support/storage.js';

let h: StorageHarness;
let svc: string;
let pub: string;
let priv: string;

beforeAll(async () => {
  h = await startStorage('file');
  svc = h.project.serviceRoleKey;
  pub = bucketName('pub');
  priv = bucketName('priv');
  await h.service.createBucket(pub, { public: true });
  await h.service.createBucket(priv, { public: false });
  await h.service.from(pub).upload('x.txt', 'public bytes', { contentType: 'text/plain' });
  await h.service.from(priv).upload('x.txt', 'private bytes', { contentType: 'text/plain' });
});
afterAll(async () => h?.close());

const json = (body: unknown, method = 'POST') => ({
  method,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

interface Envelope {
  statusCode: string;
  error: string;
  message: string;
  code: string;
}

async function storageError(res: Response, http = 400): Promise<Envelope> {
  expect(res.status).toBe(http);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as Envelope;
  expect(Object.keys(body).sort()).toEqual(['code', 'error', 'message', 'statusCode']);
  return body;
}

describe('key segments', () => {
  it('a segment over 255 bytes is InvalidKey (400), on upload and read; 255 is fine', async () => {
    const long = 'a'.repeat(256);
    for (const path of [`/object/${pub}/${long}`, `/object/${pub}/dir/${long}/f.txt`]) {
      const up = await h.api(path, { method: 'POST', token: svc, body: 'x' });
      expect(await storageError(up)).toMatchObject({ statusCode: '400', code: 'InvalidKey' });
      const get = await h.api(path.replace('/object/', '/object/authenticated/'), { token: svc });
      expect(await storageError(get)).toMatchObject({ code: 'InvalidKey' });
    }
    const ok = await h.api(`/object/${pub}/${'b'.repeat(255)}`, { method: 'POST', token: svc, body: 'x' });
    expect(ok.status).toBe(200);
    const moved = await h.api(
      '/object/move',
      json({ bucketId: pub, sourceKey: 'b'.repeat(255), destinationKey: `d/${'c'.repeat(300)}` }),
    );
    expect(moved.status).toBe(400);
  });
});

describe('tokens', () => {
  let bad: Record<string, string>;
  beforeAll(async () => {
    bad = {
      garbage: 'garbage',
      foreign: await signJwt('another-secret-another-secret-another-secret', { role: 'service_role' }),
      expired: await signJwt(h.project.jwtSecret, {
        role: 'authenticated',
        exp: Math.floor(Date.now() / 1000) - 10,
      }),
    };
  });

  /** Every route that reads a token, as [method, path, body]. */
  const routes = (): [string, string, unknown?][] => [
    ['GET', '/bucket'],
    ['POST', '/bucket', { name: bucketName('n') }],
    ['GET', `/bucket/${pub}`],
    ['PUT', `/bucket/${pub}`, { public: true }],
    ['DELETE', `/bucket/${priv}`],
    ['POST', `/object/${pub}/new.txt`],
    ['PUT', `/object/${pub}/x.txt`],
    ['DELETE', `/object/${pub}/x.txt`],
    ['DELETE', `/object/${pub}`, { prefixes: ['x.txt'] }],
    ['POST', '/object/move', { bucketId: pub, sourceKey: 'x.txt', destinationKey: 'y.txt' }],
    ['POST', '/object/copy', { bucketId: pub, sourceKey: 'x.txt', destinationKey: 'y.txt' }],
    ['POST', `/object/list/${pub}`, { prefix: '' }],
    ['POST', `/object/list-v2/${pub}`, {}],
    ['POST', `/object/sign/${pub}/x.txt`, { expiresIn: 60 }],
    ['POST', `/object/sign/${pub}`, { expiresIn: 60, paths: ['x.txt'] }],
    ['POST', `/object/upload/sign/${pub}/new.txt`],
    ['GET', `/object/authenticated/${pub}/x.txt`],
    ['GET', `/object/info/authenticated/${pub}/x.txt`],
    ['GET', `/object/info/${pub}/x.txt`],
    // The optional-auth routes: no token means anonymous, a bad one is refused (not downgraded).
    ['GET', `/object/${pub}/x.txt`],
    ['GET', `/object/${priv}/x.txt`],
  ];

  it('an invalid, foreign or expired token is AccessDenied on every route that reads one', async () => {
    for (const [kind, token] of Object.entries(bad)) {
      for (const [method, path, body] of routes()) {
        const init = body === undefined ? { method } : json(body, method);
        const res = await h.api(path, { ...init, token });
        const env = await storageError(res);
        expect({ kind, method, path, code: env.code, statusCode: env.statusCode }).toEqual({
          kind,
          method,
          path,
          code: 'AccessDenied',
          statusCode: '403',
        });
      }
      // HEAD has no body but the same status.
      for (const path of [`/object/${pub}/x.txt`, `/object/info/${pub}/x.txt`]) {
        expect((await h.api(path, { method: 'HEAD', token })).status).toBe(400);
      }
      // The apikey header and the authorization query parameter are tokens too.
      expect((await h.api(`/object/${pub}/x.txt`, { headers: { apikey: token } })).status).toBe(400);
      expect((await h.api(`/object/${pub}/x.txt?authorization=${encodeURIComponent(token)}`)).status).toBe(
        400,
      );
    }
    // What the public bucket still serves: no token at all, a valid anon key, and the public and
    // signed routes, which never read a token (as upstream: no JWT step on those routes).
    const none = await h.api(`/object/${pub}/x.txt`);
    expect(none.status).toBe(200);
    expect(await none.text()).toBe('public bytes');
    expect((await h.api(`/object/${pub}/x.txt`, { token: h.project.anonKey })).status).toBe(200);
    expect((await h.api(`/object/public/${pub}/x.txt`, { token: bad.garbage })).status).toBe(200);
    // Anonymous callers still never see a private bucket.
    expect((await h.api(`/object/${priv}/x.txt`)).status).toBe(400);
  });
});

describe('NUL bytes', () => {
  it('in a key, a bucket name or a query string: 400 in the storage shape', async () => {
    for (const [method, path] of [
      ['POST', `/object/${pub}/a%00b.txt`],
      ['GET', `/object/${pub}/a%00b.txt`],
      ['GET', `/object/authenticated/${pub}/a%00b.txt`],
      ['GET', `/object/public/${pub}/a%00b.txt`],
      ['DELETE', `/object/${pub}/a%00b.txt`],
      ['GET', '/bucket/a%00b'],
      ['DELETE', '/bucket/a%00b'],
      ['GET', `/object/public/${pub}/x.txt?download=a%00b`],
      ['POST', `/object/list/a%00b`],
    ] as const) {
      const res = await h.api(path, { method, token: svc, body: method === 'POST' ? 'x' : undefined });
      const env = await storageError(res);
      expect(env.statusCode).toBe('400');
    }
  });

  it('in JSON bodies (bucket names, prefixes, keys, search, nested deep): 400, not 500', async () => {
    const cases: [string, unknown][] = [
      ['/bucket', { name: 'a\u0000b' }],
      ['/bucket', { name: 'ok', allowed_mime_types: ['text/\u0000plain'] }],
      [`/object/list/${pub}`, { prefix: '\u0000' }],
      [`/object/list/${pub}`, { prefix: '', search: 'a\u0000' }],
      [`/object/list-v2/${pub}`, { prefix: 'a\u0000' }],
      ['/object/move', { bucketId: pub, sourceKey: 'x.txt', destinationKey: 'y\u0000.txt' }],
      [
        '/object/copy',
        { bucketId: pub, sourceKey: 'x.txt', destinationKey: 'z.txt', metadata: { a: 'b\u0000' } },
      ],
      [`/object/sign/${pub}`, { expiresIn: 60, paths: ['x\u0000.txt'] }],
      [`/object/${pub}`, { prefixes: ['\u0000'] }],
      ['/bucket', { name: 'ok', nested: { deep: [[[{ k: '\u0000' }]]] } }],
      ['/bucket', { name: 'ok', 'k\u0000': 1 }],
    ];
    for (const [path, body] of cases) {
      const method = path.startsWith(`/object/${pub}`) ? 'DELETE' : 'POST';
      const res = await h.api(path, { ...json(body, method), token: svc });
      const env = await storageError(res);
      expect({ path, statusCode: env.statusCode, code: env.code }).toEqual({
        path,
        statusCode: '400',
        code: 'InvalidRequest',
      });
    }
  });

  it('in upload metadata (x-metadata header, multipart fields): 400 and nothing stored', async () => {
    const meta = Buffer.from(JSON.stringify({ a: 'b\u0000c' })).toString('base64');
    const raw = await h.api(`/object/${pub}/meta-raw.txt`, {
      method: 'POST',
      token: svc,
      headers: { 'x-metadata': meta, 'content-type': 'text/plain' },
      body: 'x',
    });
    expect((await storageError(raw)).code).toBe('InvalidRequest');
    for (const [field, value] of [
      ['metadata', JSON.stringify({ a: '\u0000' })],
      ['cacheControl', '36\u00000'],
      ['contentType', 'text/\u0000plain'],
    ]) {
      const form = new FormData();
      form.append(String(field), String(value));
      form.append('', new Blob(['x'], { type: 'text/plain' }), 'f.txt');
      const res = await h.api(`/object/${pub}/meta-form.txt`, { method: 'POST', token: svc, body: form });
      expect((await storageError(res)).statusCode).toBe('400');
    }
    const rows = await h.sql(`select name from storage.objects where bucket_id = $1 and name like 'meta-%'`, [
      pub,
    ]);
    expect(rows).toEqual([]);
  });

  it('unpaired surrogates in user metadata (x-metadata, form field, copy): stored as U+FFFD, never a 500', async () => {
    const lone = '{"k\\ud800":"v\\udc00"}';
    const raw = await h.api(`/object/${pub}/sur-raw.txt`, {
      method: 'POST',
      token: svc,
      headers: { 'x-metadata': Buffer.from(lone).toString('base64'), 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(raw.status).toBe(200);
    const form = new FormData();
    form.append('metadata', lone);
    form.append('', new Blob(['x'], { type: 'text/plain' }), 'f.txt');
    const viaForm = await h.api(`/object/${pub}/sur-form.txt`, { method: 'POST', token: svc, body: form });
    expect(viaForm.status).toBe(200);
    const copied = await h.api('/object/copy', {
      ...json({ bucketId: pub, sourceKey: 'sur-raw.txt', destinationKey: 'sur-copy.txt' }, 'POST'),
      token: svc,
      headers: { 'content-type': 'application/json', 'x-metadata': Buffer.from(lone).toString('base64') },
    });
    expect(copied.status).toBe(200);
    const rows = await h.sql<{ name: string; user_metadata: unknown }>(
      `select name, user_metadata from storage.objects where bucket_id = $1 and name like 'sur-%' order by name`,
      [pub],
    );
    expect(rows.map((r) => r.name)).toEqual(['sur-copy.txt', 'sur-form.txt', 'sur-raw.txt']);
    for (const r of rows) expect(r.user_metadata).toEqual({ 'k\uFFFD': 'v\uFFFD' });
  });

  it('in a header: the HTTP layer refuses it with 400 and the server carries on', async () => {
    const url = new URL(`${h.base}/object/${pub}/x.txt`);
    const status = await new Promise<number | undefined>((resolve) => {
      // Node's HTTP client refuses NUL in a header, so the request is written by hand.
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\u0000b\r\n\r\n`);
      });
      let data = '';
      socket.on('data', (d) => {
        data += d;
        const m = /^HTTP\/1\.1 (\d+)/.exec(data);
        if (m) {
          resolve(Number(m[1]));
          socket.destroy();
        }
      });
      socket.on('error', () => resolve(undefined));
      socket.on('close', () => resolve(undefined));
    });
    expect(status).toBe(400);
    expect((await h.api(`/object/${pub}/x.txt`)).status).toBe(200);
  });
});
