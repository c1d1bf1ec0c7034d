/**
 * A full S3 store under the S3 backend: the store (a real s3rver behind a relay that, while "full",
 * answers object writes the way MinIO and Ceph do when out of space) refuses the bytes, and each
 * API answers 507 InsufficientStorage in its own shape instead of a 500; no row is left, and
 * uploads work again once the store has room.
 */
import { s3ClientWithNewKey } from './s3-support.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { type Server, createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketName, startStorage, type StorageHarness } from '../support/storage.js';
import { s3Error } from './s3-support.js';
import { runUpload, statusOf, bodyOf } from './tus-support.js';

const require = createRequire(import.meta.url);

/** What the relay answers object writes with while the store is "full". */
let fullReply: { status: number; code: string } | undefined;

const STORE_BUCKET = 'strata-full';
let s3rver: { close(): Promise<void> };
let s3dir: string;
let relay: Server;
let h: StorageHarness;
let s3: S3Client;
const b = bucketName('full');

/** Forwards to s3rver; while full, PUT/POST of an object (not a bucket) is refused. */
function startRelay(target: number): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const objectWrite = (req.method === 'PUT' || req.method === 'POST') && path.split('/').length > 2;
    if (fullReply && objectWrite) {
      const { status, code } = fullReply;
      req.resume();
      req.on('end', () => {
        res.writeHead(status, { 'content-type': 'application/xml' });
        res.end(
          `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>Storage backend has reached its minimum free drive threshold.</Message></Error>`,
        );
      });
      return;
    }
    const out = request(
      { host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 500, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  s3dir = mkdtempSync(join(tmpdir(), 'strata-s3full-'));
  const S3rver = require('s3rver') as new (
    o: Record<string, unknown>,
  ) => { run(): Promise<{ port: number }>; close(): Promise<void> };
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: s3dir,
    allowMismatchedSignatures: true,
  });
  const { port } = await server.run();
  s3rver = server;
  relay = await startRelay(port);
  const endpoint = `http://127.0.0.1:${(relay.address() as { port: number }).port}`;
  const store = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  await store.send(new CreateBucketCommand({ Bucket: STORE_BUCKET }));
  store.destroy();
  h = await startStorage('file', {
    storageBackend: 's3',
    s3: {
      endpoint,
      region: 'us-east-1',
      bucket: STORE_BUCKET,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    },
  });
  s3 = await s3ClientWithNewKey(h, 'full');
  expect((await h.service.createBucket(b)).error).toBeNull();
});

afterAll(async () => {
  fullReply = undefined;
  s3?.destroy();
  await h?.close();
  await new Promise((resolve) => relay?.close(resolve));
  await s3rver?.close();
  if (s3dir) rmSync(s3dir, { recursive: true, force: true });
});

const rows = async (key: string) =>
  (await h.sql('select 1 from storage.objects where bucket_id = $1 and name = $2', [b, key])).length;

describe('a full S3 store under the S3 backend', () => {
  it.each([
    [507, 'XMinioStorageFull'],
    [507, 'InsufficientStorage'],
    [403, 'QuotaExceeded'],
  ])('REST upload: store answers %i %s → 507 in the REST envelope, no row', async (status, code) => {
    fullReply = { status, code };
    try {
      const res = await h.api(`/object/${b}/rest-${code}.bin`, {
        method: 'POST',
        token: h.project.serviceRoleKey,
        headers: { 'content-type': 'application/octet-stream' },
        body: new Uint8Array(64 * 1024).fill(1),
      });
      expect(res.status).toBe(507);
      expect(await res.json()).toMatchObject({
        statusCode: '507',
        error: 'Insufficient Storage',
        message: 'There is not enough space left on the storage backend to store the object',
      });
      expect(await rows(`rest-${code}.bin`)).toBe(0);
    } finally {
      fullReply = undefined;
    }
  });

  it('S3 PutObject and a TUS upload: 507 in their shapes; the same writes succeed once there is room', async () => {
    fullReply = { status: 507, code: 'XMinioStorageFull' };
    try {
      const e = await s3Error(s3.send(new PutObjectCommand({ Bucket: b, Key: 's3.bin', Body: 'bytes' })));
      expect([e.$metadata.httpStatusCode, e.name]).toEqual([507, 'InsufficientStorage']);
      const tus = await runUpload(Buffer.from('resumable bytes'), {
        endpoint: `${h.base}/upload/resumable`,
        headers: { authorization: `Bearer ${h.project.serviceRoleKey}` },
        metadata: { bucketName: b, objectName: 'tus.bin', contentType: 'application/octet-stream' },
      });
      expect(statusOf(tus)).toBe(507);
      expect(bodyOf(tus)).toContain('not enough space');
      expect(await rows('s3.bin')).toBe(0);
      expect(await rows('tus.bin')).toBe(0);
    } finally {
      fullReply = undefined;
    }
    await s3.send(new PutObjectCommand({ Bucket: b, Key: 's3.bin', Body: 'bytes' }));
    const again = await runUpload(Buffer.from('resumable bytes'), {
      endpoint: `${h.base}/upload/resumable`,
      headers: { authorization: `Bearer ${h.project.serviceRoleKey}` },
      metadata: { bucketName: b, objectName: 'tus.bin', contentType: 'application/octet-stream' },
    });
    expect(again.error).toBeUndefined();
    expect(await (await h.service.from(b).download('tus.bin')).data!.text()).toBe('resumable bytes');
  });
});
