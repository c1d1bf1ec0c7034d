/**
 * HEAD with a Range header answers as the GET would, without the body: S3 HeadObject and the REST
 * HEAD give 206 with Content-Range and the range's Content-Length, 416 with an unsatisfied-range
 * Content-Range for an unsatisfiable range, and 200 (whole length) when If-Range does not hold.
 */
import { describe, expect, it } from 'vitest';
import { CreateBucketCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { bucketName } from '../support/storage.js';
import { s3Error, useS3Platform } from './s3-support.js';

const env = useS3Platform();

describe('HEAD with Range', () => {
  it('S3 HeadObject: 206 with Content-Range; suffix and open ranges; 416 when unsatisfiable; If-Range', async () => {
    const b = bucketName('head');
    await env.s3.send(new CreateBucketCommand({ Bucket: b }));
    const put = await env.s3.send(new PutObjectCommand({ Bucket: b, Key: 'ten.txt', Body: '0123456789' }));
    const head = (Range?: string, IfMatch?: string) =>
      env.s3.send(new HeadObjectCommand({ Bucket: b, Key: 'ten.txt', Range, IfMatch }));
    for (const [range, contentRange, length] of [
      ['bytes=0-3', 'bytes 0-3/10', 4],
      ['bytes=7-', 'bytes 7-9/10', 3],
      ['bytes=-2', 'bytes 8-9/10', 2],
      ['bytes=5-100', 'bytes 5-9/10', 5],
    ] as const) {
      const out = await head(range);
      expect([range, out.$metadata.httpStatusCode, out.ContentRange, out.ContentLength]).toEqual([
        range,
        206,
        contentRange,
        length,
      ]);
    }
    const whole = await head();
    expect([whole.$metadata.httpStatusCode, whole.ContentRange, whole.ContentLength]).toEqual([
      200,
      undefined,
      10,
    ]);
    const e = await s3Error(head('bytes=10-'));
    expect(e.$metadata.httpStatusCode).toBe(416);
    // The ETag still matches: the range applies.
    expect((await head('bytes=0-0', put.ETag)).$metadata.httpStatusCode).toBe(206);
  });

  it('REST HEAD: 206 and Content-Range, 416 bytes */N, If-Range with another ETag gives 200 whole', async () => {
    const b = bucketName('head');
    const svc = env.h.project.serviceRoleKey;
    expect((await env.h.service.createBucket(b)).error).toBeNull();
    expect((await env.h.service.from(b).upload('ten.txt', '0123456789')).error).toBeNull();
    const head = (headers: Record<string, string>) =>
      env.h.api(`/object/authenticated/${b}/ten.txt`, { method: 'HEAD', token: svc, headers });
    const partial = await head({ range: 'bytes=2-5' });
    expect([
      partial.status,
      partial.headers.get('content-range'),
      partial.headers.get('content-length'),
    ]).toEqual([206, 'bytes 2-5/10', '4']);
    const bad = await head({ range: 'bytes=20-' });
    expect([bad.status, bad.headers.get('content-range')]).toEqual([416, 'bytes */10']);
    const stale = await head({ range: 'bytes=2-5', 'if-range': '"not-the-etag"' });
    expect([stale.status, stale.headers.get('content-range'), stale.headers.get('content-length')]).toEqual([
      200,
      null,
      '10',
    ]);
  });
});
