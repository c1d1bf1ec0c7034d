/**
 * The S3 protocol at {project}/storage/v1/s3 through the real AWS SDK v3 (@aws-sdk/client-s3 and
 * @aws-sdk/s3-request-presigner): access keys from the Management API, session-token mode with a
 * user JWT (RLS applies), every supported operation, and the errors S3 clients match on.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SignatureV4 } from '@smithy/signature-v4';
import { AwsChunkedDecoder } from '../../src/storage/s3/aws-chunked.js';
import { NodeSha256 } from '../../src/storage/s3/sigv4.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketName, startStorage, uuid, type StorageHarness } from './harness.js';

let h: StorageHarness;
let endpoint: string;
let keys: AccessKey;

interface AccessKey {
  id: string;
  access_key: string;
  secret_key: string;
}
let s3: S3Client;

function must<T>(v: T | null | undefined): T {
  if (v === null || v === undefined) throw new Error('expected a value');
  return v;
}

const md5 = (b: Buffer | string) => `"${createHash('md5').update(b).digest('hex')}"`;

function client(creds: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): S3Client {
  return new S3Client({
    endpoint,
    region: 'local',
    forcePathStyle: true,
    credentials: creds,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 1,
  });
}

async function mgmt<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: T }> {
  const res = await fetch(`${h.tp.url}/v1/projects/${h.tp.platform.defaultRef}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${h.tp.platform.defaultAccessToken}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : undefined) as T };
}

async function s3Error(p: Promise<unknown>): Promise<S3ServiceException> {
  try {
    await p;
  } catch (err) {
    if (err instanceof S3ServiceException) return err;
    throw err;
  }
  throw new Error('expected an S3 error');
}

beforeAll(async () => {
  h = await startStorage('file');
  endpoint = `${h.base}/s3`;
  const created = await mgmt<AccessKey>('POST', '/storage/s3-access-keys', { description: 'test key' });
  expect(created.status).toBe(201);
  keys = created.json;
  s3 = client({ accessKeyId: keys.access_key, secretAccessKey: keys.secret_key });
});
afterAll(async () => {
  s3?.destroy();
  await h?.close();
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
    const bad = client({ accessKeyId: keys.access_key, secretAccessKey: `${keys.secret_key.slice(0, -1)}0` });
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

describe('operations with an access key (service role)', () => {
  it('buckets: create, head, list, delete (not while non-empty)', async () => {
    const b = bucketName('s3b');
    await s3.send(new CreateBucketCommand({ Bucket: b }));
    const dup = await s3Error(s3.send(new CreateBucketCommand({ Bucket: b })));
    expect(dup.$metadata.httpStatusCode).toBe(409);
    expect((await s3.send(new HeadBucketCommand({ Bucket: b }))).$metadata.httpStatusCode).toBe(200);
    const list = await s3.send(new ListBucketsCommand({}));
    expect(list.Buckets?.map((x) => x.Name)).toContain(b);
    expect(list.Buckets?.find((x) => x.Name === b)?.CreationDate).toBeInstanceOf(Date);
    await s3.send(new PutObjectCommand({ Bucket: b, Key: 'x', Body: 'x' }));
    const notEmpty = await s3Error(s3.send(new DeleteBucketCommand({ Bucket: b })));
    expect(notEmpty.$metadata.httpStatusCode).toBe(409);
    await s3.send(new DeleteObjectCommand({ Bucket: b, Key: 'x' }));
    await s3.send(new DeleteBucketCommand({ Bucket: b }));
    expect((await h.service.getBucket(b)).error).toBeTruthy();
  });

  it('objects: put/get/head/range/delete are the same objects as the REST API', async () => {
    const b = bucketName('s3o');
    await s3.send(new CreateBucketCommand({ Bucket: b }));
    const body = Buffer.from('hello s3 world, 0123456789');
    const put = await s3.send(
      new PutObjectCommand({
        Bucket: b,
        Key: 'dir/hello.txt',
        Body: body,
        ContentType: 'text/plain',
        Metadata: { color: 'blue' },
      }),
    );
    expect(put.ETag).toBe(md5(body));
    // The REST API sees the same row and bytes.
    const rest = await h.service.from(b).download('dir/hello.txt');
    expect(Buffer.from(await must(rest.data).arrayBuffer()).equals(body)).toBe(true);
    const info = await h.service.from(b).info('dir/hello.txt');
    expect(info.data).toMatchObject({ contentType: 'text/plain', size: body.length });
    // And S3 sees REST uploads.
    await h.service.from(b).upload('dir/rest.txt', 'from rest', { contentType: 'text/plain' });
    const got = await s3.send(new GetObjectCommand({ Bucket: b, Key: 'dir/rest.txt' }));
    expect(await must(got.Body).transformToString()).toBe('from rest');
    expect(got.ContentType).toBe('text/plain');

    const head = await s3.send(new HeadObjectCommand({ Bucket: b, Key: 'dir/hello.txt' }));
    expect(head).toMatchObject({ ContentLength: body.length, ETag: md5(body), ContentType: 'text/plain' });
    expect(head.Metadata).toEqual({ color: 'blue' });
    expect(head.LastModified).toBeInstanceOf(Date);

    const range = await s3.send(
      new GetObjectCommand({ Bucket: b, Key: 'dir/hello.txt', Range: 'bytes=6-7' }),
    );
    expect(range.$metadata.httpStatusCode).toBe(206);
    expect(range.ContentRange).toBe(`bytes 6-7/${body.length}`);
    expect(await must(range.Body).transformToString()).toBe('s3');

    await s3.send(new DeleteObjectCommand({ Bucket: b, Key: 'dir/hello.txt' }));
    await s3.send(new DeleteObjectCommand({ Bucket: b, Key: 'dir/hello.txt' })); // idempotent
    expect((await h.service.from(b).exists('dir/hello.txt')).data).toBe(false);
    expect((await h.storedKeys()).filter((k) => k.includes(`${b}/dir/hello.txt`))).toEqual([]);
  });

  it('keys with spaces and reserved characters round-trip; non-ASCII keys are refused as on REST', async () => {
    const b = bucketName('s3k');
    await s3.send(new CreateBucketCommand({ Bucket: b }));
    // The key alphabet is the REST API's (the reference's): ASCII word characters and these marks.
    for (const key of ["a b/c+d=e&f's (1).txt", 'x,y;z:@$!*.bin', 'q?u/e=ry&.txt']) {
      await s3.send(new PutObjectCommand({ Bucket: b, Key: key, Body: key }));
      const got = await s3.send(new GetObjectCommand({ Bucket: b, Key: key }));
      expect(await must(got.Body).transformToString()).toBe(key);
    }
    const uni = await s3Error(s3.send(new PutObjectCommand({ Bucket: b, Key: 'ünï.txt', Body: 'x' })));
    expect(uni.name).toBe('InvalidKey');
  });

  it('the SDK default client (checksums on, aws-chunked streaming bodies) round-trips', async () => {
    const b = bucketName('s3c');
    await s3.send(new CreateBucketCommand({ Bucket: b }));
    const dflt = new S3Client({
      endpoint,
      region: 'local',
      forcePathStyle: true,
      credentials: { accessKeyId: keys.access_key, secretAccessKey: keys.secret_key },
      maxAttempts: 1,
    });
    const sent: Array<string | undefined> = [];
    dflt.middlewareStack.add(
      (next) => async (args) => {
        const headers = (args.request as { headers?: Record<string, string> }).headers ?? {};
        sent.push(headers['x-amz-content-sha256']);
        return next(args);
      },
      { step: 'finalizeRequest', priority: 'low' },
    );
    const data = Buffer.alloc(300_000, 7);
    await dflt.send(
      new PutObjectCommand({
        Bucket: b,
        Key: 'streamed.bin',
        Body: Readable.from([data.subarray(0, 100_000), data.subarray(100_000)]),
        ContentLength: data.length,
      }),
    );
    await dflt.send(new PutObjectCommand({ Bucket: b, Key: 'buffered.bin', Body: data }));
    // The stream went aws-chunked (with a checksum trailer); the buffer as one signed payload.
    expect(sent).toEqual(['STREAMING-UNSIGNED-PAYLOAD-TRAILER', expect.stringMatching(/^[0-9a-f]{64}$/)]);
    for (const key of ['streamed.bin', 'buffered.bin']) {
      const got = await dflt.send(new GetObjectCommand({ Bucket: b, Key: key }));
      expect(Buffer.from(await must(got.Body).transformToByteArray()).equals(data), key).toBe(true);
    }
    dflt.destroy();
  });

  it('signed aws-chunked bodies (STREAMING-AWS4-HMAC-SHA256-PAYLOAD): every frame is verified', async () => {
    const b = bucketName('s3sc');
    await s3.send(new CreateBucketCommand({ Bucket: b }));
    const url = new URL(`${endpoint}/${b}/signed.bin`);
    const frames = [Buffer.alloc(70_000, 1), Buffer.alloc(1_000, 2)];
    const put = async (tamper: boolean) => {
      const signer = new SignatureV4({
        credentials: { accessKeyId: keys.access_key, secretAccessKey: keys.secret_key },
        region: 'local',
        service: 's3',
        sha256: NodeSha256,
        uriEscapePath: false,
      });
      const signingDate = new Date();
      const total = frames.reduce((n, f) => n + f.length, 0);
      const signed = await signer.sign(
        {
          method: 'PUT',
          protocol: 'http:',
          hostname: url.hostname,
          port: Number(url.port),
          path: url.pathname,
          query: {},
          headers: {
            host: url.host,
            'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
            'content-encoding': 'aws-chunked',
            'x-amz-decoded-content-length': String(total),
          },
        },
        { signingDate },
      );
      const headers = signed.headers as Record<string, string>;
      let previous = /Signature=([0-9a-f]{64})/.exec(headers.authorization ?? '')?.[1] ?? '';
      const longDate = headers['x-amz-date'] ?? '';
      const scope = `${longDate.slice(0, 8)}/local/s3/aws4_request`;
      const parts: Buffer[] = [];
      for (const data of [...frames, Buffer.alloc(0)]) {
        const sts = [
          'AWS4-HMAC-SHA256-PAYLOAD',
          longDate,
          scope,
          previous,
          createHash('sha256').update('').digest('hex'),
          createHash('sha256').update(data).digest('hex'),
        ].join('\n');
        previous = await signer.sign(sts, { signingDate });
        const sent = tamper && data.length === 1_000 ? Buffer.alloc(1_000, 3) : data;
        parts.push(
          Buffer.from(`${data.length.toString(16)};chunk-signature=${previous}\r\n`),
          sent,
          Buffer.from('\r\n'),
        );
      }
      const { host: _host, ...rest } = headers;
      return fetch(url, { method: 'PUT', headers: rest, body: Buffer.concat(parts) });
    };
    const bad = await put(true);
    expect(bad.status).toBe(403);
    expect(await bad.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    expect((await h.service.from(b).exists('signed.bin')).data).toBe(false);
    const ok = await put(false);
    expect(ok.status).toBe(200);
    const got = await s3.send(new GetObjectCommand({ Bucket: b, Key: 'signed.bin' }));
    expect(Buffer.from(await must(got.Body).transformToByteArray()).equals(Buffer.concat(frames))).toBe(true);
  });

  it('ListObjectsV2: prefix, delimiter, continuation, start-after', async () => {
    const b = bucketName('s3l');
    await s3.send(new CreateBucketCommand({ Bucket: b }));
    const names = ['a.txt', 'b/1.txt', 'b/2.txt', 'b/c/3.txt', 'c.txt', 'd/4.txt'];
    for (const n of names) await s3.send(new PutObjectCommand({ Bucket: b, Key: n, Body: n }));
    const all = await s3.send(new ListObjectsV2Command({ Bucket: b }));
    expect(all.Contents?.map((c) => c.Key)).toEqual(names);
    expect(all.KeyCount).toBe(6);
    expect(all.Contents?.[0]).toMatchObject({ Size: 5, ETag: md5('a.txt') });

    const top = await s3.send(new ListObjectsV2Command({ Bucket: b, Delimiter: '/' }));
    expect(top.Contents?.map((c) => c.Key)).toEqual(['a.txt', 'c.txt']);
    expect(top.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['b/', 'd/']);

    const inB = await s3.send(new ListObjectsV2Command({ Bucket: b, Prefix: 'b/', Delimiter: '/' }));
    expect(inB.Contents?.map((c) => c.Key)).toEqual(['b/1.txt', 'b/2.txt']);
    expect(inB.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['b/c/']);

    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: b, MaxKeys: 2, Delimiter: '/', ContinuationToken: token }),
      );
      pages++;
      seen.push(
        ...(page.Contents ?? []).map((c) => must(c.Key)),
        ...(page.CommonPrefixes ?? []).map((p) => must(p.Prefix)),
      );
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
      if (page.IsTruncated) expect(page.KeyCount).toBe(2);
    } while (token && pages < 10);
    expect(seen.sort()).toEqual(['a.txt', 'b/', 'c.txt', 'd/']);
    expect(pages).toBe(2);

    const after = await s3.send(new ListObjectsV2Command({ Bucket: b, StartAfter: 'b/c/3.txt' }));
    expect(after.Contents?.map((c) => c.Key)).toEqual(['c.txt', 'd/4.txt']);
    // ListObjects (v1): markers; a NextMarker that is a common prefix skips that folder.
    const v1seen: string[] = [];
    let marker: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await s3.send(
        new ListObjectsCommand({ Bucket: b, MaxKeys: 2, Delimiter: '/', Marker: marker }),
      );
      v1seen.push(
        ...(page.Contents ?? []).map((c) => must(c.Key)),
        ...(page.CommonPrefixes ?? []).map((p) => must(p.Prefix)),
      );
      if (!page.IsTruncated) break;
      marker = page.NextMarker;
    }
    expect(v1seen.sort()).toEqual(['a.txt', 'b/', 'c.txt', 'd/']);
    const bad = await s3Error(s3.send(new ListObjectsV2Command({ Bucket: b, ContinuationToken: 'garbage' })));
    expect(bad.$metadata.httpStatusCode).toBe(400);
  });

  it('DeleteObjects and CopyObject', async () => {
    const b = bucketName('s3d');
    await s3.send(new CreateBucketCommand({ Bucket: b }));
    for (const n of ['1', '2', '3']) await s3.send(new PutObjectCommand({ Bucket: b, Key: n, Body: n }));
    const copied = await s3.send(
      new CopyObjectCommand({ Bucket: b, Key: 'copy of 1', CopySource: `${b}/${encodeURIComponent('1')}` }),
    );
    expect(copied.CopyObjectResult?.ETag).toBe(md5('1'));
    const c = await s3.send(new GetObjectCommand({ Bucket: b, Key: 'copy of 1' }));
    expect(await must(c.Body).transformToString()).toBe('1');
    const res = await s3.send(
      new DeleteObjectsCommand({
        Bucket: b,
        Delete: { Objects: [{ Key: '1' }, { Key: '2' }, { Key: 'missing' }] },
      }),
    );
    expect(res.Deleted?.map((d) => d.Key).sort()).toEqual(['1', '2', 'missing']);
    const left = await s3.send(new ListObjectsV2Command({ Bucket: b }));
    expect(left.Contents?.map((x) => x.Key)).toEqual(['3', 'copy of 1']);
  });

  it('multipart: 5 parts, list parts, complete; abort removes the parts', async () => {
    const b = bucketName('s3m');
    await s3.send(new CreateBucketCommand({ Bucket: b }));
    const created = await s3.send(
      new CreateMultipartUploadCommand({ Bucket: b, Key: 'big.bin', ContentType: 'application/x-test' }),
    );
    const UploadId = must(created.UploadId);
    const parts: Buffer[] = [];
    const etags: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const part = Buffer.alloc(i < 5 ? 5 * 1024 * 1024 : 1234, i);
      parts.push(part);
      const up = await s3.send(
        new UploadPartCommand({ Bucket: b, Key: 'big.bin', UploadId, PartNumber: i, Body: part }),
      );
      expect(up.ETag).toBe(md5(part));
      etags.push(must(up.ETag));
    }
    const listed = await s3.send(new ListPartsCommand({ Bucket: b, Key: 'big.bin', UploadId }));
    expect(listed.Parts?.map((p) => [p.PartNumber, p.ETag, p.Size])).toEqual(
      parts.map((p, i) => [i + 1, etags[i], p.length]),
    );
    const page = await s3.send(new ListPartsCommand({ Bucket: b, Key: 'big.bin', UploadId, MaxParts: 2 }));
    expect(page.IsTruncated).toBe(true);
    expect(page.NextPartNumberMarker).toBe('2');
    const wrongOrder = await s3Error(
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: b,
          Key: 'big.bin',
          UploadId,
          MultipartUpload: {
            Parts: [
              { PartNumber: 2, ETag: etags[1] },
              { PartNumber: 1, ETag: etags[0] },
            ],
          },
        }),
      ),
    );
    expect(wrongOrder.name).toBe('InvalidPartOrder');
    const done = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: b,
        Key: 'big.bin',
        UploadId,
        MultipartUpload: { Parts: etags.map((ETag, i) => ({ PartNumber: i + 1, ETag })) },
      }),
    );
    const whole = Buffer.concat(parts);
    expect(done.ETag).toBe(md5(whole));
    const head = await s3.send(new HeadObjectCommand({ Bucket: b, Key: 'big.bin' }));
    expect(head).toMatchObject({ ContentLength: whole.length, ContentType: 'application/x-test' });
    const rest = await h.service.from(b).download('big.bin');
    expect(Buffer.from(await must(rest.data).arrayBuffer()).equals(whole)).toBe(true);
    // Parts are gone (only the object's one version remains), and the upload is finished.
    expect((await h.storedKeys()).filter((k) => k.includes(`${b}/big.bin`))).toHaveLength(1);
    const again = await s3Error(s3.send(new ListPartsCommand({ Bucket: b, Key: 'big.bin', UploadId })));
    expect(again.name).toBe('NoSuchUpload');

    const second = await s3.send(new CreateMultipartUploadCommand({ Bucket: b, Key: 'aborted.bin' }));
    await s3.send(
      new UploadPartCommand({
        Bucket: b,
        Key: 'aborted.bin',
        UploadId: second.UploadId,
        PartNumber: 1,
        Body: 'x',
      }),
    );
    await s3.send(
      new AbortMultipartUploadCommand({ Bucket: b, Key: 'aborted.bin', UploadId: second.UploadId }),
    );
    expect((await h.storedKeys()).filter((k) => k.includes(`${b}/aborted.bin`))).toEqual([]);
    const missingPart = await s3.send(new CreateMultipartUploadCommand({ Bucket: b, Key: 'p.bin' }));
    const invalid = await s3Error(
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: b,
          Key: 'p.bin',
          UploadId: missingPart.UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"x"' }] },
        }),
      ),
    );
    expect(invalid.name).toBe('InvalidPart');
  });

  it('a presigned GET works without credentials; tampering or expiry is refused', async () => {
    const b = bucketName('s3p');
    await s3.send(new CreateBucketCommand({ Bucket: b }));
    await s3.send(
      new PutObjectCommand({ Bucket: b, Key: 'p/q r.txt', Body: 'presigned!', ContentType: 'text/plain' }),
    );
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: b, Key: 'p/q r.txt' }), {
      expiresIn: 60,
    });
    expect(url).toContain('X-Amz-Signature=');
    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('presigned!');
    const tampered = await fetch(url.replace('q%20r.txt', 'other.txt'));
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    const past = await getSignedUrl(s3, new GetObjectCommand({ Bucket: b, Key: 'p/q r.txt' }), {
      expiresIn: 1,
      signingDate: new Date(Date.now() - 120_000),
    });
    const expired = await fetch(past);
    expect(expired.status).toBe(400);
    expect(await expired.text()).toContain(
      '<Code>ExpiredToken</Code><Message>The provided token has expired.</Message>',
    );
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
    const res = await fetch(`${hs.tp.url}/v1/projects/${hs.tp.platform.defaultRef}/storage/s3-access-keys`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${hs.tp.platform.defaultAccessToken}`,
        'content-type': 'application/json',
      },
      body: '{}',
    });
    const k = (await res.json()) as AccessKey;
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
