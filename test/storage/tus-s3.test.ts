/**
 * Resumable uploads on the `s3` backend (s3rver): unfinished uploads live in S3 (a multipart upload
 * at the object version's key, `<key>.tus-info` and `<key>.tus-part` beside it), nothing on local
 * disk; completion gives the same row and the same key layout as a plain upload; resume after the
 * connection is cut 3 times; termination and empty uploads leave nothing behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Backends } from '../../src/storage/backend/index.js';
import type { S3Backend } from '../../src/storage/backend/s3.js';
import { TusS3Store } from '../../src/storage/tus/s3-store.js';
import { bucketName, startStorage, type StorageHarness } from '../support/storage.js';
import { cuttingRelay, runUpload } from './tus-support.js';

let h: StorageHarness;
let svc: string;
let b: string;

beforeAll(async () => {
  h = await startStorage('s3');
  svc = h.project.serviceRoleKey;
  b = bucketName('tus-s3');
  await h.service.createBucket(b, { public: false });
});
afterAll(async () => h?.close());

const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');
const md5 = (buf: Buffer) => `"${createHash('md5').update(buf).digest('hex')}"`;
const b64 = (s: string) => Buffer.from(s).toString('base64');

async function download(key: string): Promise<Buffer> {
  const res = await h.api(`/object/authenticated/${b}/${key}`, { token: svc });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

interface Row {
  version: string;
  metadata: Record<string, unknown>;
  user_metadata: Record<string, unknown> | null;
}

async function rowOf(key: string): Promise<Row> {
  const rows = await h.sql<Row>(
    'select version, metadata, user_metadata from storage.objects where bucket_id = $1 and name = $2',
    [b, key],
  );
  expect(rows).toHaveLength(1);
  return rows[0] as Row;
}

/** The S3 keys (below the project's prefix) under one object key. */
async function keysOf(key: string): Promise<string[]> {
  return (await h.storedKeys()).filter((k) => k.startsWith(`${b}/${key}/`));
}

function localTusFiles(): string[] {
  const dir = join(h.project.filesDir, 'storage', '.tus');
  return existsSync(dir) ? readdirSync(dir) : [];
}

const endpoint = () => `${h.base}/upload/resumable`;

describe('TUS on the s3 backend', () => {
  it('same row and same key layout as a plain upload; PATCHes smaller than a part go through the tail', async () => {
    const data = randomBytes(9 * 1024 * 1024 + 17);
    const out = await runUpload(data, {
      endpoint: endpoint(),
      headers: { authorization: `Bearer ${svc}` },
      chunkSize: 3 * 1024 * 1024,
      metadata: {
        bucketName: b,
        objectName: 'same/tus.bin',
        contentType: 'application/x-test',
        cacheControl: '3600',
        metadata: JSON.stringify({ who: 'tus' }),
      },
    });
    expect(out.error).toBeUndefined();
    const plain = await h.service.from(b).upload('same/plain.bin', data, {
      contentType: 'application/x-test',
      cacheControl: '3600',
      metadata: { who: 'tus' },
    });
    expect(plain.error).toBeNull();
    expect(sha(await download('same/tus.bin'))).toBe(sha(data));
    const viaTus = await rowOf('same/tus.bin');
    const viaPut = await rowOf('same/plain.bin');
    const stable = (r: Row) => {
      const { lastModified: _l, ...rest } = r.metadata;
      return { metadata: rest, user_metadata: r.user_metadata };
    };
    expect(stable(viaTus)).toEqual(stable(viaPut));
    expect(viaTus.metadata).toMatchObject({
      eTag: md5(data),
      size: data.length,
      mimetype: 'application/x-test',
      cacheControl: 'max-age=3600',
    });
    // The bytes sit exactly where the S3 backend puts a version; nothing else is left.
    expect(await keysOf('same/tus.bin')).toEqual([`${b}/same/tus.bin/${viaTus.version}`]);
    expect(await keysOf('same/plain.bin')).toEqual([`${b}/same/plain.bin/${viaPut.version}`]);
    expect(localTusFiles()).toEqual([]);
  });

  it('resumes after the connection is cut 3 times; the unfinished upload lives in S3 only', async () => {
    const data = randomBytes(40 * 1024 * 1024 + 5);
    const target = new URL(h.base);
    const relay = await cuttingRelay(
      target,
      [0.2, 0.45, 0.7].map((f) => Math.floor(f * data.length)),
    );
    let midway: string[] = [];
    try {
      const out = await runUpload(data, {
        endpoint: `${relay.origin}${target.pathname}/upload/resumable`,
        headers: { authorization: `Bearer ${svc}` },
        retryDelays: [0, 200, 500, 1000, 1000, 1000],
        metadata: { bucketName: b, objectName: 'big/resumed.bin' },
        onShouldRetry: () => {
          if (midway.length === 0) midway = localTusFiles().concat(['checked']);
          return true;
        },
      });
      expect(out.error).toBeUndefined();
      expect(relay.cuts()).toBe(3);
    } finally {
      await relay.close();
    }
    expect(midway).toEqual(['checked']);
    expect(sha(await download('big/resumed.bin'))).toBe(sha(data));
    const row = await rowOf('big/resumed.bin');
    expect(row.metadata).toMatchObject({ eTag: md5(data), size: data.length });
    expect(await keysOf('big/resumed.bin')).toEqual([`${b}/big/resumed.bin/${row.version}`]);
  }, 300_000);

  it('HEAD reports what is durable in S3: parts and tail, across PATCHes of any size', async () => {
    const data = randomBytes(10 * 1024 * 1024);
    const meta = `bucketName ${b64(b)},objectName ${b64('raw/parts.bin')}`;
    const created = await h.api('/upload/resumable', {
      method: 'POST',
      token: svc,
      headers: { 'tus-resumable': '1.0.0', 'upload-length': String(data.length), 'upload-metadata': meta },
    });
    expect(created.status).toBe(201);
    const path = new URL(created.headers.get('location') ?? '').pathname.replace(/^\/storage\/v1/, '');
    const patch = (offset: number, body: Buffer) =>
      h.api(path, {
        method: 'PATCH',
        token: svc,
        headers: {
          'tus-resumable': '1.0.0',
          'upload-offset': String(offset),
          'content-type': 'application/offset+octet-stream',
        },
        body: new Uint8Array(body),
      });
    const cuts = [0, 1000, 3 * 1024 * 1024, 9 * 1024 * 1024 + 3, data.length];
    for (let i = 1; i < cuts.length; i++) {
      const from = cuts[i - 1] as number;
      const to = cuts[i] as number;
      const res = await patch(from, data.subarray(from, to));
      expect(res.status).toBe(204);
      expect(res.headers.get('upload-offset')).toBe(String(to));
      if (to < data.length) {
        const head = await h.api(path, { method: 'HEAD', token: svc, headers: { 'tus-resumable': '1.0.0' } });
        expect(head.headers.get('upload-offset')).toBe(String(to));
        const keys = await keysOf('raw/parts.bin');
        expect(keys.some((k) => k.endsWith('.tus-info'))).toBe(true);
      }
    }
    expect(sha(await download('raw/parts.bin'))).toBe(sha(data));
    const row = await rowOf('raw/parts.bin');
    expect(await keysOf('raw/parts.bin')).toEqual([`${b}/raw/parts.bin/${row.version}`]);
  });

  /** Creates a 100-byte upload with its first `sent` bytes (creation-with-upload). */
  const createPartial = (objectName: string, sent: number) =>
    h.api('/upload/resumable', {
      method: 'POST',
      token: svc,
      headers: {
        'tus-resumable': '1.0.0',
        'upload-length': '100',
        'upload-metadata': `bucketName ${b64(b)},objectName ${b64(objectName)}`,
        'content-type': 'application/offset+octet-stream',
      },
      body: 'x'.repeat(sent),
    });

  it('termination removes the unfinished upload from S3; an empty upload completes', async () => {
    const created = await createPartial('raw/gone.bin', 40);
    expect(created.status).toBe(201);
    expect(created.headers.get('upload-offset')).toBe('40');
    expect((await keysOf('raw/gone.bin')).length).toBeGreaterThan(0);
    const path = new URL(created.headers.get('location') ?? '').pathname.replace(/^\/storage\/v1/, '');
    const del = await h.api(path, { method: 'DELETE', token: svc, headers: { 'tus-resumable': '1.0.0' } });
    expect(del.status).toBe(204);
    const gone = await h.api(path, { method: 'HEAD', token: svc, headers: { 'tus-resumable': '1.0.0' } });
    expect(gone.status).toBe(404);
    expect(await keysOf('raw/gone.bin')).toEqual([]);

    const empty = await runUpload(Buffer.alloc(0), {
      endpoint: endpoint(),
      headers: { authorization: `Bearer ${svc}` },
      metadata: { bucketName: b, objectName: 'raw/empty.bin' },
    });
    expect(empty.error).toBeUndefined();
    expect((await download('raw/empty.bin')).length).toBe(0);
    const row = await rowOf('raw/empty.bin');
    expect(row.metadata).toMatchObject({ size: 0, eTag: md5(Buffer.alloc(0)) });
    expect(await keysOf('raw/empty.bin')).toEqual([`${b}/raw/empty.bin/${row.version}`]);
  });

  it('expired uploads and stray tails are swept from S3', async () => {
    const created = await createPartial('raw/abandoned.bin', 10);
    expect(created.status).toBe(201);
    expect((await keysOf('raw/abandoned.bin')).sort().map((k) => k.replace(/^.*\./, ''))).toEqual([
      'tus-info',
      'tus-part',
    ]);
    const backends = await Backends.load(h.tp.config);
    try {
      const backend = backends.for(h.project) as S3Backend;
      const strayKey = `${backend.prefix}${b}/raw/stray.bin/${crypto.randomUUID()}.tus-part`;
      await backend.client.send(new PutObjectCommand({ Bucket: backend.bucket, Key: strayKey, Body: 'x' }));
      const store = new TusS3Store(backend, 1);
      // Nothing is older than a minute ago yet.
      expect(await store.sweep(Date.now() - 60_000, Date.now() - 60_000)).toBe(0);
      expect(await store.sweep(Date.now() + 1000, Date.now() + 1000)).toBe(2);
    } finally {
      backends.close();
    }
    expect(await keysOf('raw/abandoned.bin')).toEqual([]);
    expect(await keysOf('raw/stray.bin')).toEqual([]);
    const path = new URL(created.headers.get('location') ?? '').pathname.replace(/^\/storage\/v1/, '');
    const head = await h.api(path, { method: 'HEAD', token: svc, headers: { 'tus-resumable': '1.0.0' } });
    expect(head.status).toBe(404);
  });
});
