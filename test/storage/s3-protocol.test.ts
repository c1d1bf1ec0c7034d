import { Readable } from 'node:stream';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { AwsChunkedDecoder } from '../../src/storage/s3/aws-chunked.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketName, startStorage, uuid, type StorageHarness } from '../support/storage.js';

import { must, s3Error, useS3Platform, type AccessKey, type S3TestPlatform } from './s3-support.js';
import { api } from '../support/management.js';

const env = useS3Platform();
let h: S3TestPlatform['h'];
let endpoint: string;
let keys: AccessKey;
let s3: S3Client;
const client: typeof env.client = (creds) => env.client(creds);
const mgmt: typeof env.mgmt = (method, path, body) => env.mgmt(method, path, body);
beforeAll(() => {
  ({ h, endpoint, keys, s3 } = env);
});

describe('access keys (Management API)', () => {
  it('creates, lists without the secret, deletes; a deleted key is refused', async () => {
    expect(keys).toMatchObject({
      description: 'test key',
      access_key: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(keys.secret_key).toMatch(/^[0-9a-f]{64}$/);
    const extra = await mgmt<AccessKey>('POST', '/storage/s3-access-keys', {});
    const list = await mgmt<AccessKey[]>('GET', '/storage/s3-access-keys');
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.json)).not.toContain(keys.secret_key);
    expect(list.json.map((k) => k.id)).toEqual(expect.arrayContaining([keys.id, extra.json.id]));
    expect(list.json[0]).not.toHaveProperty('secret_key');
    const stored = await h.tp.platform.pool.query(
      'select secret_encrypted::text as s from storage_s3_access_keys',
    );
    expect(JSON.stringify(stored.rows)).not.toContain(extra.json.secret_key);
    expect((await mgmt('DELETE', `/storage/s3-access-keys/${extra.json.id}`)).status).toBe(200);
    expect((await mgmt('DELETE', `/storage/s3-access-keys/${extra.json.id}`)).status).toBe(404);
    expect((await mgmt('DELETE', '/storage/s3-access-keys/not-a-uuid')).status).toBe(400);
    expect((await mgmt('POST', '/storage/s3-access-keys', { description: 5 })).status).toBe(400);
    const gone = client({ accessKeyId: extra.json.access_key, secretAccessKey: extra.json.secret_key });
    const err = await s3Error(gone.send(new ListBucketsCommand({})));
    expect(err.name).toBe('InvalidAccessKeyId');
    expect(err.$metadata.httpStatusCode).toBe(403);
    gone.destroy();
  });
});

describe('hostile input first', () => {
  it('a bad signature is 403 SignatureDoesNotMatch in S3 XML', async () => {
    // The secret with its last character changed (always: a secret ending in 0 stayed valid before).
    const last = keys.secret_key.endsWith('0') ? '1' : '0';
    const bad = client({
      accessKeyId: keys.access_key,
      secretAccessKey: `${keys.secret_key.slice(0, -1)}${last}`,
    });
    const err = await s3Error(bad.send(new ListBucketsCommand({})));
    expect(err.name).toBe('SignatureDoesNotMatch');
    expect(err.$metadata.httpStatusCode).toBe(403);
    bad.destroy();
    const raw = await fetch(`${endpoint}/`, {
      headers: {
        authorization: `AWS4-HMAC-SHA256 Credential=${keys.access_key}/20990101/local/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`,
        'x-amz-date': new Date().toISOString().replace(/[-:]|\.\d{3}/g, ''),
        'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
      },
    });
    expect(raw.status).toBe(400);
    expect(raw.headers.get('content-type')).toMatch(/^application\/xml/);
    const text = await raw.text();
    expect(text).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><Error><Code>InvalidSignature<\/Code>/);
  });

  it('unsigned requests are AccessDenied; a skewed clock is refused', async () => {
    const res = await fetch(`${endpoint}/`);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('<Code>AccessDenied</Code>');
    const skewed = new S3Client({
      endpoint,
      region: 'local',
      forcePathStyle: true,
      credentials: { accessKeyId: keys.access_key, secretAccessKey: keys.secret_key },
      systemClockOffset: -3600_000,
      maxAttempts: 1,
    });
    const err = await s3Error(skewed.send(new ListBucketsCommand({})));
    expect(err.name).toBe('RequestTimeTooSkewed');
    skewed.destroy();
  });

  it('NUL and oversized keys are 400 InvalidKey XML; malformed XML bodies are MalformedXML', async () => {
    const b = bucketName('s3h');
    await s3.send(new CreateBucketCommand({ Bucket: b }));
    const nul = await s3Error(s3.send(new PutObjectCommand({ Bucket: b, Key: 'a\u0000b', Body: 'x' })));
    expect(nul.name).toBe('InvalidKey');
    expect(nul.$metadata.httpStatusCode).toBe(400);
    const long = await s3Error(
      s3.send(new PutObjectCommand({ Bucket: b, Key: 'k'.repeat(1025), Body: 'x' })),
    );
    expect(long.name).toBe('InvalidKey');
    const dot = await s3Error(s3.send(new GetObjectCommand({ Bucket: b, Key: 'a/../b' })));
    expect(dot.$metadata.httpStatusCode).toBe(400);
    const badBucket = await s3Error(s3.send(new CreateBucketCommand({ Bucket: 'public' })));
    expect(badBucket.name).toBe('InvalidBucketName');
    const del = await s3Error(s3.send(new DeleteObjectsCommand({ Bucket: b, Delete: { Objects: [] } })));
    expect(del.$metadata.httpStatusCode).toBe(400);
    const missing = await s3Error(s3.send(new GetObjectCommand({ Bucket: b, Key: 'nope' })));
    expect(missing.name).toBe('NoSuchKey');
    expect(missing.$metadata.httpStatusCode).toBe(404);
    const noBucket = await s3Error(s3.send(new HeadBucketCommand({ Bucket: bucketName('none') })));
    expect(noBucket.$metadata.httpStatusCode).toBe(404);
    const noUpload = await s3Error(
      s3.send(new UploadPartCommand({ Bucket: b, Key: 'k', UploadId: uuid(), PartNumber: 1, Body: 'x' })),
    );
    expect(noUpload.name).toBe('NoSuchUpload');
  });
});

describe('session-token mode (user JWT, RLS applies)', () => {
  it('anon sessions are denied by RLS; a user with a policy can write and read only their folder', async () => {
    const b = bucketName('s3s');
    await s3.send(new CreateBucketCommand({ Bucket: b }));
    await s3.send(new PutObjectCommand({ Bucket: b, Key: 'secret.txt', Body: 'hidden' }));
    const ref = h.project.ref;
    const anon = client({
      accessKeyId: ref,
      secretAccessKey: h.project.anonKey,
      sessionToken: h.project.anonKey,
    });
    const denied = await s3Error(anon.send(new GetObjectCommand({ Bucket: b, Key: 'secret.txt' })));
    expect(denied.$metadata.httpStatusCode).toBe(404); // RLS hides the row
    const write = await s3Error(anon.send(new PutObjectCommand({ Bucket: b, Key: 'anon.txt', Body: 'x' })));
    expect(write.$metadata.httpStatusCode).toBe(403);
    expect(write.name).toBe('AccessDenied');
    const listed = await anon.send(new ListObjectsV2Command({ Bucket: b }));
    expect(listed.KeyCount).toBe(0);
    anon.destroy();

    const sub = uuid();
    await h.sql(
      `create policy "s3 own folder ${b}" on storage.objects for all to authenticated
       using (bucket_id = '${b}' and (storage.foldername(name))[1] = auth.uid()::text)
       with check (bucket_id = '${b}' and (storage.foldername(name))[1] = auth.uid()::text)`,
    );
    const token = await h.userToken(sub);
    // The secret may be the project ref itself (the reference accepts either).
    const user = client({ accessKeyId: ref, secretAccessKey: ref, sessionToken: token });
    await user.send(new PutObjectCommand({ Bucket: b, Key: `${sub}/mine.txt`, Body: 'mine' }));
    const mine = await user.send(new GetObjectCommand({ Bucket: b, Key: `${sub}/mine.txt` }));
    expect(await must(mine.Body).transformToString()).toBe('mine');
    const row = await h.sql<{ owner_id: string }>(
      'select owner_id from storage.objects where bucket_id = $1 and name = $2',
      [b, `${sub}/mine.txt`],
    );
    expect(row[0]?.owner_id).toBe(sub);
    const other = await s3Error(
      user.send(new PutObjectCommand({ Bucket: b, Key: 'elsewhere.txt', Body: 'x' })),
    );
    expect(other.name).toBe('AccessDenied');
    const mp = await s3Error(
      user.send(new CreateMultipartUploadCommand({ Bucket: b, Key: 'elsewhere.bin' })),
    );
    expect(mp.name).toBe('AccessDenied');
    const seen = await user.send(new ListObjectsV2Command({ Bucket: b }));
    expect(seen.Contents?.map((c) => c.Key)).toEqual([`${sub}/mine.txt`]);
    user.destroy();

    const wrongSecret = client({ accessKeyId: ref, secretAccessKey: 'nope', sessionToken: token });
    const bad = await s3Error(wrongSecret.send(new ListBucketsCommand({})));
    expect(bad.name).toBe('SignatureDoesNotMatch');
    expect(bad.message).toContain('The session token should be a valid JWT token');
    wrongSecret.destroy();
    const forged = client({ accessKeyId: ref, secretAccessKey: ref, sessionToken: 'not.a.jwt' });
    const f = await s3Error(forged.send(new ListBucketsCommand({})));
    expect(f.$metadata.httpStatusCode).toBe(403);
    forged.destroy();
  });
});

describe('aws-chunked decoding', () => {
  const decode = async (chunks: string[]) => {
    const out: Buffer[] = [];
    for await (const c of Readable.from(chunks.map((x) => Buffer.from(x, 'latin1'))).pipe(
      new AwsChunkedDecoder(),
    ))
      out.push(c as Buffer);
    return Buffer.concat(out).toString('latin1');
  };
  it('decodes signed and unsigned frames split anywhere, ignoring trailers', async () => {
    const body = `5;chunk-signature=${'a'.repeat(64)}\r\nhello\r\n6;chunk-signature=${'b'.repeat(64)}\r\n world\r\n0;chunk-signature=${'c'.repeat(64)}\r\n\r\n`;
    expect(await decode([body])).toBe('hello world');
    expect(await decode(body.split(''))).toBe('hello world');
    expect(await decode(['3\r\nabc\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n'])).toBe('abc');
  });
  it('refuses malformed and truncated bodies', async () => {
    await expect(decode(['zz\r\nabc\r\n'])).rejects.toThrow('Malformed aws-chunked body');
    await expect(decode(['3\r\nabcX\r\n0\r\n\r\n'])).rejects.toThrow('Malformed aws-chunked body');
    await expect(decode(['5\r\nabc'])).rejects.toThrow('Incomplete aws-chunked body');
    await expect(decode(['f'.repeat(5000)])).rejects.toThrow('Malformed aws-chunked body');
  });
});

describe('on the S3 storage backend', () => {
  let hs: StorageHarness;
  let c: S3Client;
  beforeAll(async () => {
    hs = await startStorage('s3');
    const res = await api<AccessKey>(
      hs.tp,
      'POST',
      `/v1/projects/${hs.tp.platform.defaultRef}/storage/s3-access-keys`,
      {
        body: {},
      },
    );
    const k = res.body;
    c = new S3Client({
      endpoint: `${hs.base}/s3`,
      region: 'local',
      forcePathStyle: true,
      credentials: { accessKeyId: k.access_key, secretAccessKey: k.secret_key },
      maxAttempts: 1,
    });
  });
  afterAll(async () => {
    c?.destroy();
    await hs?.close();
  });

  it('put, range get, multipart and delete leave exactly the object bytes behind', async () => {
    const b = bucketName('s3be');
    await c.send(new CreateBucketCommand({ Bucket: b }));
    await c.send(new PutObjectCommand({ Bucket: b, Key: 'one.txt', Body: 'abcdef' }));
    const r = await c.send(new GetObjectCommand({ Bucket: b, Key: 'one.txt', Range: 'bytes=2-3' }));
    expect(await must(r.Body).transformToString()).toBe('cd');
    const { UploadId } = await c.send(new CreateMultipartUploadCommand({ Bucket: b, Key: 'mp.bin' }));
    const p1 = Buffer.alloc(5 * 1024 * 1024, 1);
    const p2 = Buffer.from('tail');
    const e1 = await c.send(
      new UploadPartCommand({ Bucket: b, Key: 'mp.bin', UploadId, PartNumber: 1, Body: p1 }),
    );
    const e2 = await c.send(
      new UploadPartCommand({ Bucket: b, Key: 'mp.bin', UploadId, PartNumber: 2, Body: p2 }),
    );
    await c.send(
      new CompleteMultipartUploadCommand({
        Bucket: b,
        Key: 'mp.bin',
        UploadId,
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: e1.ETag },
            { PartNumber: 2, ETag: e2.ETag },
          ],
        },
      }),
    );
    const got = await c.send(new GetObjectCommand({ Bucket: b, Key: 'mp.bin' }));
    expect(Buffer.from(await must(got.Body).transformToByteArray()).equals(Buffer.concat([p1, p2]))).toBe(
      true,
    );
    expect((await hs.storedKeys()).filter((k) => k.includes(`${b}/`)).sort()).toHaveLength(2);
    await c.send(
      new DeleteObjectsCommand({ Bucket: b, Delete: { Objects: [{ Key: 'one.txt' }, { Key: 'mp.bin' }] } }),
    );
    expect((await hs.storedKeys()).filter((k) => k.includes(`${b}/`))).toEqual([]);
  });
});
