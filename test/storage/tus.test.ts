/**
 * Resumable uploads (TUS 1.0) at /upload/resumable with the real tus-js-client: the protocol's
 * answers (OPTIONS, 412, HEAD offsets, termination), a normal upload, resume after the connection
 * is cut 3 times (1 GiB, generated as a stream and checked by a streamed sha256), signed resumable uploads,
 * RLS denial, bucket size and MIME limits, hostile ids and metadata.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { bucketName, startStorage, type StorageHarness } from '../support/storage.js';
import { bodyOf, cuttingRelay, digestBody, prngStream, runUpload, statusOf } from './tus-support.js';

let h: StorageHarness;
let svc: string;
let b: string;

beforeAll(async () => {
  h = await startStorage('file');
  svc = h.project.serviceRoleKey;
  b = bucketName('tus');
  await h.service.createBucket(b, { public: false });
});
afterAll(async () => h?.close());

const sha = (buf: Buffer | ArrayBuffer) =>
  createHash('sha256')
    .update(Buffer.from(buf as ArrayBuffer))
    .digest('hex');

const b64 = (s: string) => Buffer.from(s).toString('base64');

function tusDir(): string {
  return join(h.project.filesDir, 'storage', '.tus');
}

async function download(key: string, bucket = b): Promise<Buffer> {
  const res = await h.api(`/object/authenticated/${bucket}/${key}`, { token: svc });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('TUS protocol answers', () => {
  const raw = (path: string, init: RequestInit & { token?: string } = {}) =>
    h.api(`/upload/resumable${path}`, { token: svc, ...init });

  it('OPTIONS advertises the protocol; requests without Tus-Resumable get 412', async () => {
    const opt = await h.api('/upload/resumable', { method: 'OPTIONS' });
    expect(opt.status).toBe(204);
    expect(opt.headers.get('tus-resumable')).toBe('1.0.0');
    expect(opt.headers.get('tus-version')).toContain('1.0.0');
    expect(opt.headers.get('tus-extension')).toContain('creation');
    expect(opt.headers.get('tus-extension')).toContain('termination');
    expect(opt.headers.get('tus-extension')).toContain('expiration');
    const noVersion = await raw('', { method: 'POST', headers: { 'upload-length': '3' } });
    expect(noVersion.status).toBe(412);
  });

  it('creation, HEAD offset, PATCH, termination; Location names the upload', async () => {
    const meta = `bucketName ${b64(b)},objectName ${b64('raw/one.txt')},contentType ${b64('text/plain')}`;
    const created = await raw('', {
      method: 'POST',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '10', 'upload-metadata': meta },
    });
    expect(created.status).toBe(201);
    const location = created.headers.get('location') ?? '';
    expect(location).toMatch(/\/storage\/v1\/upload\/resumable\/[A-Za-z0-9_-]+$/);
    expect(Buffer.from(location.split('/').pop() ?? '', 'base64url').toString()).toMatch(
      new RegExp(`^${b}/raw/one\\.txt/[0-9a-f-]{36}$`),
    );
    expect(created.headers.get('upload-expires')).toBeTruthy();
    const path = new URL(location).pathname.replace(/^\/storage\/v1\/upload\/resumable/, '');
    const head = await raw(path, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' } });
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe('0');
    expect(head.headers.get('upload-length')).toBe('10');
    const patch = await raw(path, {
      method: 'PATCH',
      headers: {
        'tus-resumable': '1.0.0',
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
      },
      body: '01234',
    });
    expect(patch.status).toBe(204);
    expect(patch.headers.get('upload-offset')).toBe('5');
    const wrongOffset = await raw(path, {
      method: 'PATCH',
      headers: {
        'tus-resumable': '1.0.0',
        'upload-offset': '1',
        'content-type': 'application/offset+octet-stream',
      },
      body: 'x',
    });
    expect(wrongOffset.status).toBe(409);
    const del = await raw(path, { method: 'DELETE', headers: { 'tus-resumable': '1.0.0' } });
    expect(del.status).toBe(204);
    const gone = await raw(path, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' } });
    expect(gone.status).toBe(404);
    expect(readdirSync(tusDir())).toEqual([]);
  });

  it('hostile requests: bad token, missing metadata, NUL in metadata, bad ids, bad keys', async () => {
    const bad = await raw('', {
      method: 'POST',
      token: 'garbage',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '3' },
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'AccessDenied', statusCode: '403' });
    const noToken = await h.api('/upload/resumable', {
      method: 'POST',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '3' },
    });
    expect(noToken.status).toBe(400);
    const post = (meta: string) =>
      raw('', {
        method: 'POST',
        headers: { 'tus-resumable': '1.0.0', 'upload-length': '3', 'upload-metadata': meta },
      });
    expect((await post(`bucketName ${b64(b)}`)).status).toBe(400);
    expect((await post(`bucketName ${b64(b)},objectName ${b64('a\u0000b')}`)).status).toBe(400);
    expect(
      (await post(`bucketName ${b64(b)},objectName ${b64('x')},metadata ${b64('{"a":"\u0000"}')}`)).status,
    ).toBe(400);
    expect((await post(`bucketName ${b64(b)},objectName ${b64('../../etc/passwd')}`)).status).toBe(400);
    expect((await post(`bucketName ${b64(b)},objectName ${b64('s'.repeat(300))}`)).status).toBe(400);
    expect((await post(`bucketName ${b64('nope-nope')},objectName ${b64('x')}`)).status).toBe(404);
    for (const id of ['not-base64!', Buffer.from('../../x').toString('base64url'), 'A'.repeat(5000)]) {
      const head = await raw(`/${id}`, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' } });
      expect(head.status).toBe(404);
    }
    expect(readdirSync(tusDir())).toEqual([]);
  });
});

describe('tus-js-client', () => {
  it('uploads with metadata; the object is byte-exact with its content type, cache control and metadata', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const out = await runUpload(data, {
      endpoint: `${h.base}/upload/resumable`,
      headers: { authorization: `Bearer ${svc}` },
      uploadDataDuringCreation: true,
      chunkSize: 1024 * 1024,
      metadata: {
        bucketName: b,
        objectName: 'client/one.bin',
        contentType: 'application/x-test',
        cacheControl: '3600',
        metadata: JSON.stringify({ who: 'tus' }),
      },
    });
    expect(out.error).toBeUndefined();
    expect(sha(await download('client/one.bin'))).toBe(sha(data));
    const info = await (await h.api(`/object/info/authenticated/${b}/client/one.bin`, { token: svc })).json();
    expect(info).toMatchObject({
      size: data.length,
      content_type: 'application/x-test',
      cache_control: 'max-age=3600',
      metadata: { who: 'tus' },
    });
    expect(readdirSync(tusDir())).toEqual([]);
    // x-upsert: without it an existing key is a conflict; with it the object is replaced.
    const again = await runUpload(Buffer.from('new'), {
      endpoint: `${h.base}/upload/resumable`,
      headers: { authorization: `Bearer ${svc}` },
      metadata: { bucketName: b, objectName: 'client/one.bin' },
    });
    expect(statusOf(again)).toBe(409);
    const upsert = await runUpload(Buffer.from('new'), {
      endpoint: `${h.base}/upload/resumable`,
      headers: { authorization: `Bearer ${svc}`, 'x-upsert': 'true' },
      metadata: { bucketName: b, objectName: 'client/one.bin' },
    });
    expect(upsert.error).toBeUndefined();
    expect((await download('client/one.bin')).toString()).toBe('new');
  });

  it('resumes after the connection is cut 3 times (1 GiB streamed), byte-exact at the end', async () => {
    const size = 1024 * 1024 * 1024;
    const source = prngStream(size);
    const relay = await cuttingRelay(
      new URL(h.base),
      [0.2, 0.45, 0.7].map((f) => Math.floor(f * size)),
    );
    const started = Date.now();
    try {
      const out = await runUpload(source.stream, {
        endpoint: `${relay.origin}${new URL(h.base).pathname}/upload/resumable`,
        headers: { authorization: `Bearer ${svc}` },
        uploadSize: size,
        // A stream source is buffered one chunk at a time (and resent from there after a cut).
        chunkSize: 64 * 1024 * 1024,
        retryDelays: [0, 200, 500, 1000, 1000, 1000],
        metadata: { bucketName: b, objectName: 'big/resumed.bin', contentType: 'application/octet-stream' },
      });
      expect(out.error).toBeUndefined();
      expect(relay.cuts()).toBe(3);
    } finally {
      await relay.close();
    }
    const uploaded = Date.now();
    const got = await digestBody(await h.api(`/object/authenticated/${b}/big/resumed.bin`, { token: svc }));
    expect(got).toEqual({ sha256: source.sha256(), size });
    expect(readdirSync(tusDir())).toEqual([]);
    console.log(
      `tus 1 GiB with 3 cuts: upload ${((uploaded - started) / 1000).toFixed(1)} s, ` +
        `streamed check ${((Date.now() - uploaded) / 1000).toFixed(1)} s`,
    );
  }, 600_000);

  it('an upload completed by its creation request (empty) becomes the object; nothing is left', async () => {
    const out = await runUpload(Buffer.alloc(0), {
      endpoint: `${h.base}/upload/resumable`,
      headers: { authorization: `Bearer ${svc}` },
      metadata: { bucketName: b, objectName: 'client/empty.bin' },
    });
    expect(out.error).toBeUndefined();
    expect((await download('client/empty.bin')).length).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    expect(readdirSync(tusDir())).toEqual([]);
  });

  it('two clients racing on one upload id cannot interleave their bytes', async () => {
    const MiB = 1024 * 1024;
    const a = randomBytes(4 * MiB);
    // Small, so that B's body is all sent before the server answers (and closes) B's request.
    const bData = randomBytes(1024);
    const meta = `bucketName ${b64(b)},objectName ${b64('race/one.bin')}`;
    const created = await h.api('/upload/resumable', {
      method: 'POST',
      token: svc,
      headers: { 'tus-resumable': '1.0.0', 'upload-length': String(a.length), 'upload-metadata': meta },
    });
    expect(created.status).toBe(201);
    const url = new URL(created.headers.get('location') ?? '');
    const patchHeaders = (offset: number, length: number) => ({
      authorization: `Bearer ${svc}`,
      'tus-resumable': '1.0.0',
      'upload-offset': String(offset),
      'content-type': 'application/offset+octet-stream',
      'content-length': String(length),
    });
    // Client A sends 1 MiB of its PATCH and stalls, holding the upload's lock.
    const reqA = request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'PATCH',
      headers: patchHeaders(0, a.length),
    });
    const answerA = new Promise<number | undefined>((resolve) => {
      reqA.on('response', (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      reqA.on('error', () => resolve(undefined));
    });
    reqA.write(a.subarray(0, MiB));
    await new Promise((r) => setTimeout(r, 500));
    // Client B PATCHes the same upload from offset 0: A is asked to let go, keeps what it wrote,
    // and B's offset no longer matches: 409, nothing of B's is written.
    const resB = await h.api(url.pathname.replace(/^\/storage\/v1/, ''), {
      method: 'PATCH',
      token: svc,
      headers: patchHeaders(0, bData.length),
      body: bData,
    });
    expect(resB.status).toBe(409);
    reqA.destroy();
    await answerA;
    const head = await h.api(url.pathname.replace(/^\/storage\/v1/, ''), {
      method: 'HEAD',
      token: svc,
      headers: { 'tus-resumable': '1.0.0' },
    });
    const offset = Number(head.headers.get('upload-offset'));
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThanOrEqual(MiB);
    const rest = await h.api(url.pathname.replace(/^\/storage\/v1/, ''), {
      method: 'PATCH',
      token: svc,
      headers: patchHeaders(offset, a.length - offset),
      body: a.subarray(offset),
    });
    expect(rest.status).toBe(204);
    expect(sha(await download('race/one.bin'))).toBe(sha(a));
  });

  it('signed resumable upload with the createSignedUploadUrl token (x-signature), no Authorization', async () => {
    const { data: signed, error } = await h.service.from(b).createSignedUploadUrl('signed/one.bin');
    expect(error).toBeNull();
    const data = randomBytes(200_000);
    const out = await runUpload(data, {
      endpoint: `${h.base}/upload/resumable/sign`,
      headers: { 'x-signature': signed?.token ?? '' },
      metadata: { bucketName: b, objectName: 'signed/one.bin' },
    });
    expect(out.error).toBeUndefined();
    expect(out.url).toContain('/upload/resumable/sign/');
    expect(sha(await download('signed/one.bin'))).toBe(sha(data));
    // The token is bound to its path, and required.
    const other = await runUpload(data, {
      endpoint: `${h.base}/upload/resumable/sign`,
      headers: { 'x-signature': signed?.token ?? '' },
      metadata: { bucketName: b, objectName: 'signed/other.bin' },
    });
    expect(statusOf(other)).toBe(400);
    const none = await runUpload(data, {
      endpoint: `${h.base}/upload/resumable/sign`,
      metadata: { bucketName: b, objectName: 'signed/one.bin' },
    });
    expect(statusOf(none)).toBe(400);
  });

  it('RLS: a user without an insert policy is denied at creation; with one, writes only their folder', async () => {
    const sub = '6d3c9d5e-6f0e-4a53-9b2a-0c1f2e3d4c5b';
    const token = await h.userToken(sub);
    const denied = await runUpload(Buffer.from('nope'), {
      endpoint: `${h.base}/upload/resumable`,
      headers: { authorization: `Bearer ${token}` },
      metadata: { bucketName: b, objectName: `${sub}/a.txt` },
    });
    expect(statusOf(denied)).toBe(403);
    expect(bodyOf(denied)).toBe('new row violates row-level security policy');
    await h.sql(
      `create policy tus_own_folder on storage.objects for insert to authenticated
         with check (bucket_id = '${b}' and (storage.foldername(name))[1] = auth.uid()::text)`,
    );
    try {
      const ok = await runUpload(Buffer.from('mine'), {
        endpoint: `${h.base}/upload/resumable`,
        headers: { authorization: `Bearer ${token}` },
        metadata: { bucketName: b, objectName: `${sub}/a.txt` },
      });
      expect(ok.error).toBeUndefined();
      const rows = await h.sql<{ owner_id: string }>(
        'select owner_id from storage.objects where bucket_id = $1 and name = $2',
        [b, `${sub}/a.txt`],
      );
      expect(rows).toEqual([{ owner_id: sub }]);
      const elsewhere = await runUpload(Buffer.from('theirs'), {
        endpoint: `${h.base}/upload/resumable`,
        headers: { authorization: `Bearer ${token}` },
        metadata: { bucketName: b, objectName: 'someone-else/a.txt' },
      });
      expect(statusOf(elsewhere)).toBe(403);
    } finally {
      await h.sql('drop policy tus_own_folder on storage.objects');
    }
  });

  it('bucket limits: size at creation and again while uploading; MIME types', async () => {
    const small = bucketName('tus-small');
    await h.service.createBucket(small, {
      public: false,
      fileSizeLimit: 1000,
      allowedMimeTypes: ['text/plain'],
    });
    const tooBig = await runUpload(randomBytes(2000), {
      endpoint: `${h.base}/upload/resumable`,
      headers: { authorization: `Bearer ${svc}` },
      metadata: { bucketName: small, objectName: 'big.txt', contentType: 'text/plain' },
    });
    expect(statusOf(tooBig)).toBe(413);
    const wrongType = await runUpload(randomBytes(10), {
      endpoint: `${h.base}/upload/resumable`,
      headers: { authorization: `Bearer ${svc}` },
      metadata: { bucketName: small, objectName: 'x.png', contentType: 'image/png' },
    });
    expect(statusOf(wrongType)).toBe(415);
    // Created under the limit, then the limit shrinks: the remaining bytes are refused.
    const meta = `bucketName ${b64(small)},objectName ${b64('shrunk.txt')},contentType ${b64('text/plain')}`;
    const created = await h.api('/upload/resumable', {
      method: 'POST',
      token: svc,
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '900', 'upload-metadata': meta },
    });
    expect(created.status).toBe(201);
    await h.service.updateBucket(small, { public: false, fileSizeLimit: 100 });
    const path = new URL(created.headers.get('location') ?? '').pathname.replace(/^\/storage\/v1/, '');
    const patch = await h.api(path, {
      method: 'PATCH',
      token: svc,
      headers: {
        'tus-resumable': '1.0.0',
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
      },
      body: 'x'.repeat(900),
    });
    expect(patch.status).toBe(413);
    expect(
      await h.sql('select 1 from storage.objects where bucket_id = $1 and name = $2', [small, 'shrunk.txt']),
    ).toEqual([]);
    expect(existsSync(tusDir())).toBe(true);
  });
});
