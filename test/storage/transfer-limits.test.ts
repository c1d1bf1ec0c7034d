/**
 * Every path into a bucket keeps its limits (issue 29 item 7). The attacker is an authenticated end
 * user whose policies let them read and write objects: they upload what a permissive bucket takes,
 * then copy or move it (REST) or CopyObject it (S3, session credentials) into a bucket whose
 * `file_size_limit` or `allowed_mime_types` would have refused the upload. And list positions past
 * PostgreSQL's integer range are a 400, not a 500.
 */
import { CopyObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketName, uuid } from '../support/storage.js';
import { s3Error, useS3Platform } from './s3-support.js';

const env = useS3Platform();
const open = bucketName('open');
const small = bucketName('small');
const images = bucketName('images');
let token: string;
let session: S3Client;

async function call(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return env.h.api(path, {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function upload(bucket: string, key: string, bytes: Buffer, type: string): Promise<void> {
  const res = await env.h.api(`/object/${bucket}/${key}`, {
    method: 'POST',
    token,
    headers: { 'content-type': type },
    body: new Uint8Array(bytes),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

beforeAll(async () => {
  const { h } = env;
  const svc = h.service;
  expect((await svc.createBucket(open)).error).toBeNull();
  expect((await svc.createBucket(small, { public: false, fileSizeLimit: 10 })).error).toBeNull();
  expect((await svc.createBucket(images, { public: false, allowedMimeTypes: ['image/*'] })).error).toBeNull();
  for (const op of ['select', 'insert', 'update', 'delete']) {
    const clause = op === 'insert' ? 'with check (true)' : 'using (true)';
    await h.sql(`create policy "all ${op}" on storage.objects for ${op} to authenticated ${clause}`);
  }
  const sub = uuid();
  token = await h.userToken(sub);
  session = env.client({
    accessKeyId: h.project.ref,
    secretAccessKey: h.project.anonKey,
    sessionToken: token,
  });
  await upload(open, 'big.bin', Buffer.alloc(100, 1), 'application/octet-stream');
  await upload(open, 'page.html', Buffer.from('<p>hi</p>'), 'text/html');
});

afterAll(() => session?.destroy());

describe('file_size_limit and allowed_mime_types on copy, move and CopyObject', () => {
  it('REST copy into a bucket whose size limit the object exceeds is 413, nothing written', async () => {
    const res = await call('/object/copy', {
      bucketId: open,
      sourceKey: 'big.bin',
      destinationBucket: small,
      destinationKey: 'big.bin',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ statusCode: '413', code: 'EntityTooLarge' });
    expect(await env.h.sql('select name from storage.objects where bucket_id = $1', [small])).toEqual([]);
  });

  it('REST move into it is 413 and the source stays', async () => {
    const res = await call('/object/move', {
      bucketId: open,
      sourceKey: 'big.bin',
      destinationBucket: small,
      destinationKey: 'moved.bin',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ statusCode: '413', code: 'EntityTooLarge' });
    expect(await env.h.sql('select name from storage.objects where bucket_id = $1', [small])).toEqual([]);
    expect(
      await env.h.sql('select name from storage.objects where bucket_id = $1 and name = $2', [
        open,
        'big.bin',
      ]),
    ).toHaveLength(1);
  });

  it('REST copy/move of a type the bucket does not allow is 415; a copy that names an allowed type is checked too', async () => {
    for (const path of ['/object/copy', '/object/move']) {
      const res = await call(path, {
        bucketId: open,
        sourceKey: 'page.html',
        destinationBucket: images,
        destinationKey: 'x.png',
      });
      expect(res.status, path).toBe(400);
      expect(await res.json()).toMatchObject({ statusCode: '415', code: 'InvalidMimeType' });
    }
    const renamed = await call('/object/copy', {
      bucketId: open,
      sourceKey: 'page.html',
      destinationBucket: images,
      destinationKey: 'y.png',
      copyMetadata: false,
      metadata: { mimetype: 'image/png' },
    });
    expect(renamed.status).toBe(200);
    expect(await env.h.sql('select name from storage.objects where bucket_id = $1', [images])).toEqual([
      { name: 'y.png' },
    ]);
  });

  it('S3 CopyObject (session credentials) into the size-limited bucket is 413 EntityTooLarge', async () => {
    const err = await s3Error(
      session.send(new CopyObjectCommand({ Bucket: small, Key: 'c.bin', CopySource: `${open}/big.bin` })),
    );
    expect(err.name).toBe('EntityTooLarge');
    expect(err.$metadata.httpStatusCode).toBe(413);
  });

  it('S3 CopyObject keeping the source type the bucket does not allow is 415 InvalidMimeType', async () => {
    const err = await s3Error(
      session.send(new CopyObjectCommand({ Bucket: images, Key: 'c.png', CopySource: `${open}/page.html` })),
    );
    expect(err.name).toBe('InvalidMimeType');
    expect(err.$metadata.httpStatusCode).toBe(415);
    expect(await env.h.sql('select name from storage.objects where bucket_id = $1', [images])).toEqual([
      { name: 'y.png' },
    ]);
  });
});

describe('list positions past the integer range', () => {
  it('POST /object/list with a huge offset or limit is 400 in the storage envelope', async () => {
    for (const extra of [{ offset: 2 ** 31 }, { offset: 1e20 }, { limit: 2 ** 40 }]) {
      const res = await call(`/object/list/${open}`, { prefix: '', ...extra });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(await res.json()).toMatchObject({ statusCode: '400', error: 'Error', code: 'InvalidRequest' });
    }
    const ok = await call(`/object/list/${open}`, { prefix: '', offset: 2 ** 31 - 1 });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual([]);
  });

  it('GET /bucket with a huge offset or limit is 400', async () => {
    const res = await env.h.api('/bucket?offset=100000000000000000000', {
      token: env.h.project.serviceRoleKey,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'InvalidRequest' });
  });
});
