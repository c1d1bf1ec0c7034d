/**
 * The S3 protocol's operations through the AWS SDK v3 with a project access key (service role):
 * buckets, objects, listing, copy, multipart, ranges, presigned URLs. Setup: s3-support.ts.
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
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256 } from '../../src/storage/s3/sigv4.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { bucketName } from '../support/storage.js';

import { must, md5, s3Error, useS3Platform, type AccessKey, type S3TestPlatform } from './s3-support.js';

const env = useS3Platform();
let h: S3TestPlatform['h'];
let endpoint: string;
let keys: AccessKey;
let s3: S3Client;
beforeAll(() => {
  ({ h, endpoint, keys, s3 } = env);
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
