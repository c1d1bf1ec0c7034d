/**
 * Range requests on the REST download and S3 GetObject, as a client that resumes downloads or
 * reads the tail of an archive asks for them. The rules, from RFC 9110:
 * - §14.1.1: a suffix longer than the representation selects all of it (206, the whole object);
 * - §13.1.5: If-Range that does not match (strong ETag comparison, or an exact date) means the
 *   Range is ignored: 200 with the whole object, never bytes of a newer version;
 * - §15.5.17: a 416 carries `Content-Range: bytes *\/<length>`;
 * - §14.2: a server may ignore Range; a satisfiable multi-range request is served whole (200),
 *   as S3 does, and a Range it cannot parse is ignored.
 * And AWS CompleteMultipartUpload: every part but the last must be at least 5 MiB
 * (`EntityTooSmall`, 400).
 */
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { beforeAll, describe, expect, it } from 'vitest';
import { decideRange, ifRangeHolds } from '../../src/storage/byte-range.js';
import { bucketName } from '../support/storage.js';
import { must, s3Error, useS3Platform } from './s3-support.js';

const env = useS3Platform();
const TEN = Buffer.from('0123456789');
let bucket: string;
let eTag: string;
let lastModified: string;

beforeAll(async () => {
  bucket = bucketName('ranges');
  await env.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await env.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'ten.bin', Body: TEN }));
  const res = await rest('ten.bin', {});
  eTag = must(res.headers.get('etag'));
  lastModified = must(res.headers.get('last-modified'));
  await res.arrayBuffer();
});

function rest(key: string, headers: Record<string, string>): Promise<Response> {
  return env.h.api(`/object/${bucket}/${key}`, { headers, token: env.h.project.serviceRoleKey });
}

async function s3(key: string, headers: Record<string, string>): Promise<Response> {
  const url = await getSignedUrl(env.s3, new GetObjectCommand({ Bucket: bucket, Key: key }), {
    expiresIn: 60,
  });
  return fetch(url, { headers });
}

const surfaces = [
  ['REST download', rest],
  ['S3 GetObject', s3],
] as const;

describe.each(surfaces)('%s', (_name, get) => {
  it('a suffix range longer than the object is 206 with the whole object (RFC 9110 §14.1.1)', async () => {
    const res = await get('ten.bin', { range: 'bytes=-20' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe('bytes 0-9/10');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(TEN);
    const tail = await get('ten.bin', { range: 'bytes=-3' });
    expect(tail.status).toBe(206);
    expect(await tail.text()).toBe('789');
  });

  it('a last-pos past the end is clamped to the end (RFC 9110 §14.1.2)', async () => {
    const res = await get('ten.bin', { range: 'bytes=8-100' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe('bytes 8-9/10');
    expect(await res.text()).toBe('89');
  });

  it('If-Range that does not match is 200 with the whole object (RFC 9110 §13.1.5)', async () => {
    const stale = await get('ten.bin', {
      range: 'bytes=5-',
      'if-range': '"0123456789abcdef0123456789abcdef"',
    });
    expect(stale.status).toBe(200);
    expect(stale.headers.get('content-range')).toBeNull();
    expect(Buffer.from(await stale.arrayBuffer())).toEqual(TEN);
    // A weak validator never matches (strong comparison), even with the same opaque tag.
    const weak = await get('ten.bin', { range: 'bytes=5-', 'if-range': `W/${eTag}` });
    expect(weak.status).toBe(200);
    await weak.arrayBuffer();
    const oldDate = await get('ten.bin', { range: 'bytes=5-', 'if-range': 'Tue, 01 Jan 2002 00:00:00 GMT' });
    expect(oldDate.status).toBe(200);
    await oldDate.arrayBuffer();
  });

  it('If-Range that matches (the ETag, or Last-Modified exactly) applies the range', async () => {
    const byTag = await get('ten.bin', { range: 'bytes=5-', 'if-range': eTag });
    expect(byTag.status).toBe(206);
    expect(await byTag.text()).toBe('56789');
    const byDate = await get('ten.bin', { range: 'bytes=5-', 'if-range': lastModified });
    expect(byDate.status).toBe(206);
    expect(await byDate.text()).toBe('56789');
  });

  it('416 carries Content-Range: bytes */<length> (RFC 9110 §15.5.17)', async () => {
    for (const range of ['bytes=10-', 'bytes=10000-20000', 'bytes=-0']) {
      const res = await get('ten.bin', { range });
      expect(res.status, range).toBe(416);
      expect(res.headers.get('content-range'), range).toBe('bytes */10');
      expect(await res.text()).toContain('InvalidRange');
    }
  });

  it('a satisfiable multi-range request is served whole (200), not refused', async () => {
    const res = await get('ten.bin', { range: 'bytes=0-1,5-6' });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(TEN);
  });

  it('a Range that does not parse, or another unit, is ignored (RFC 9110 §14.2)', async () => {
    for (const range of ['bytes=abc', 'items=0-1', 'bytes=5-2']) {
      const res = await get('ten.bin', { range });
      expect(res.status, range).toBe(200);
      expect(Buffer.from(await res.arrayBuffer())).toEqual(TEN);
    }
  });
});

describe('S3 multipart part sizes (AWS CompleteMultipartUpload)', () => {
  async function upload(sizes: number[]): Promise<{ key: string; complete(): Promise<unknown> }> {
    const key = `parts-${sizes.join('-')}.bin`;
    const created = await env.s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
    const UploadId = must(created.UploadId);
    const parts: { PartNumber: number; ETag?: string }[] = [];
    for (const [i, size] of sizes.entries()) {
      const out = await env.s3.send(
        new UploadPartCommand({
          Bucket: bucket,
          Key: key,
          UploadId,
          PartNumber: i + 1,
          Body: Buffer.alloc(size, i + 1),
        }),
      );
      parts.push({ PartNumber: i + 1, ETag: out.ETag });
    }
    return {
      key,
      complete: () =>
        env.s3.send(
          new CompleteMultipartUploadCommand({
            Bucket: bucket,
            Key: key,
            UploadId,
            MultipartUpload: { Parts: parts },
          }),
        ),
    };
  }

  it('a part other than the last under 5 MiB is EntityTooSmall (400) and no object is written', async () => {
    const small = await upload([1, 1, 1]);
    const err = await s3Error(small.complete());
    expect(err.name).toBe('EntityTooSmall');
    expect(err.$metadata.httpStatusCode).toBe(400);
    const missing = await s3Error(env.s3.send(new GetObjectCommand({ Bucket: bucket, Key: small.key })));
    expect(missing.name).toBe('NoSuchKey');
  });

  it('5 MiB parts and a short last part complete', async () => {
    const ok = await upload([5 * 1024 * 1024, 3]);
    await ok.complete();
    const got = await env.s3.send(new GetObjectCommand({ Bucket: bucket, Key: ok.key }));
    expect(got.ContentLength).toBe(5 * 1024 * 1024 + 3);
    await got.Body?.transformToByteArray();
    // A single part of any size is also the last part.
    await (await upload([1])).complete();
  });
});

describe('the shared parser (src/storage/byte-range.ts)', () => {
  it('edges: empty objects, whitespace, case, huge numbers', () => {
    expect(decideRange('bytes=0-0', 0)).toEqual({ kind: 'unsatisfiable' });
    // A non-zero suffix of an empty object is satisfiable (§14.1.1) but selects nothing: whole, 200.
    expect(decideRange('bytes=-5', 0)).toEqual({ kind: 'whole' });
    expect(decideRange(' Bytes = 1 - 2 ', 10)).toEqual({ kind: 'partial', span: { start: 1, end: 2 } });
    expect(decideRange('bytes=99999999999999999999-', 10)).toEqual({ kind: 'unsatisfiable' });
    expect(decideRange('bytes=0-99999999999999999999', 10)).toEqual({
      kind: 'partial',
      span: { start: 0, end: 9 },
    });
    // One satisfiable range among unsatisfiable ones is still a multi-range request: whole.
    expect(decideRange('bytes=50-60,0-1', 10)).toEqual({ kind: 'whole' });
    expect(decideRange('bytes=50-60,70-', 10)).toEqual({ kind: 'unsatisfiable' });
    expect(decideRange('bytes=', 10)).toEqual({ kind: 'whole' });
  });

  it('If-Range compares strongly and dates exactly', () => {
    expect(ifRangeHolds(undefined, '"a"')).toBe(true);
    expect(ifRangeHolds('"a"', '"a"')).toBe(true);
    expect(ifRangeHolds('"a"', 'W/"a"')).toBe(false);
    expect(ifRangeHolds('W/"a"', '"a"')).toBe(false);
    const last = '2026-01-02T03:04:05.678Z';
    expect(ifRangeHolds('Fri, 02 Jan 2026 03:04:05 GMT', '"a"', last)).toBe(true);
    expect(ifRangeHolds('Fri, 02 Jan 2026 03:04:06 GMT', '"a"', last)).toBe(false);
    expect(ifRangeHolds('not a date', '"a"', last)).toBe(false);
  });
});
