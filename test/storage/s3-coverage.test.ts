/**
 * S3 operations SDK clients use beyond put/get/list (issue 35): GetBucketVersioning and
 * GetObjectTagging answered as AWS does for a bucket that was never versioned and an object that
 * never had tags (the SDK failed to parse the object's bytes as XML before); tagging writes refused
 * rather than taken as an object overwrite or delete; GetObject's response-* overrides;
 * UploadPartCopy (whole source, or `bytes=first-last`; any other range form is 400 as in AWS) with
 * the source read under the caller's RLS; ListMultipartUploads ordered by key then creation, paged
 * with KeyMarker / UploadIdMarker, and showing a session user only their own uploads.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetBucketVersioningCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  DeleteObjectTaggingCommand,
  type S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignatureV4 } from '@smithy/signature-v4';
import { AwsChunkedDecoder } from '../../src/storage/s3/aws-chunked.js';
import { NodeSha256 } from '../../src/storage/s3/sigv4.js';
import { bucketName, uuid } from '../support/storage.js';
import { must, s3Error, useS3Platform } from './s3-support.js';

const env = useS3Platform();
let bucket: string;
const BODY = Buffer.from('abcdefghijklmnopqrstuvwxyz');
let userA: S3Client;
let userB: S3Client;

async function sessionClient(): Promise<S3Client> {
  const token = await env.h.userToken(uuid());
  return env.client({
    accessKeyId: env.h.project.ref,
    secretAccessKey: env.h.project.anonKey,
    sessionToken: token,
  });
}

beforeAll(async () => {
  bucket = bucketName('cov');
  await env.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await env.s3.send(
    new PutObjectCommand({ Bucket: bucket, Key: 'src.txt', Body: BODY, ContentType: 'text/plain' }),
  );
  await env.h.sql(
    `create policy "cov insert" on storage.objects for insert to authenticated with check (true)`,
  );
  await env.h.sql(
    `create policy "cov select own" on storage.objects for select to authenticated using (owner_id = auth.uid()::text)`,
  );
  userA = await sessionClient();
  userB = await sessionClient();
});
afterAll(() => {
  userA?.destroy();
  userB?.destroy();
});

describe('bucket versioning and object tagging', () => {
  it('GetBucketVersioning: a never-versioned bucket has no Status; a missing bucket is NoSuchBucket', async () => {
    const v = await env.s3.send(new GetBucketVersioningCommand({ Bucket: bucket }));
    expect(v.$metadata.httpStatusCode).toBe(200);
    expect(v.Status).toBeUndefined();
    const err = await s3Error(env.s3.send(new GetBucketVersioningCommand({ Bucket: bucketName('none') })));
    expect(err.name).toBe('NoSuchBucket');
  });

  it('GetObjectTagging is an empty TagSet; tagging writes are NotImplemented and leave the object alone', async () => {
    const t = await env.s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'src.txt' }));
    expect(t.TagSet ?? []).toEqual([]);
    const put = await s3Error(
      env.s3.send(
        new PutObjectTaggingCommand({
          Bucket: bucket,
          Key: 'src.txt',
          Tagging: { TagSet: [{ Key: 'a', Value: 'b' }] },
        }),
      ),
    );
    expect(put.$metadata.httpStatusCode).toBe(501);
    const del = await s3Error(
      env.s3.send(new DeleteObjectTaggingCommand({ Bucket: bucket, Key: 'src.txt' })),
    );
    expect(del.$metadata.httpStatusCode).toBe(501);
    const got = await env.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'src.txt' }));
    expect(await got.Body?.transformToString()).toBe(BODY.toString());
    const missing = await s3Error(
      env.s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'nope.txt' })),
    );
    expect(missing.name).toBe('NoSuchKey');
  });
});

describe('bodies typed multipart/form-data (the POST-policy form parser is registered on S3)', () => {
  it('PutObject and UploadPart of such a type store the raw bytes', async () => {
    const type = 'multipart/form-data; boundary=xyz';
    await env.s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'form.bin', Body: 'raw --xyz bytes', ContentType: type }),
    );
    const got = await env.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'form.bin' }));
    expect(got.ContentType).toBe(type);
    expect(await got.Body?.transformToString()).toBe('raw --xyz bytes');
  });
});

describe('GetObject response-* overrides', () => {
  it('replace the reply headers for this read only', async () => {
    const expires = new Date('2031-02-03T04:05:06Z');
    const got = await env.s3.send(
      new GetObjectCommand({
        Bucket: bucket,
        Key: 'src.txt',
        ResponseCacheControl: 'no-store',
        ResponseContentDisposition: 'attachment; filename="x.txt"',
        ResponseContentLanguage: 'fr',
        ResponseContentType: 'application/x-test',
        ResponseExpires: expires,
      }),
    );
    expect(got.CacheControl).toBe('no-store');
    expect(got.ContentDisposition).toBe('attachment; filename="x.txt"');
    expect(got.ContentLanguage).toBe('fr');
    expect(got.ContentType).toBe('application/x-test');
    expect(got.ExpiresString).toBe(expires.toUTCString());
    await got.Body?.transformToString();
    const plain = await env.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'src.txt' }));
    expect(plain.ContentType).toBe('text/plain');
  });
});

describe('UploadPartCopy', () => {
  async function copyPart(client: S3Client, key: string, range?: string) {
    const created = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
    const UploadId = must(created.UploadId);
    const part = client.send(
      new UploadPartCopyCommand({
        Bucket: bucket,
        Key: key,
        UploadId,
        PartNumber: 1,
        CopySource: `${bucket}/src.txt`,
        CopySourceRange: range,
      }),
    );
    return { UploadId, part };
  }

  it('copies a byte range or the whole source into a part; the completed object has those bytes', async () => {
    for (const [key, range, want] of [
      ['ranged.txt', 'bytes=2-5', 'cdef'],
      ['whole.txt', undefined, BODY.toString()],
    ] as const) {
      const { UploadId, part } = await copyPart(env.s3, key, range);
      const out = await part;
      expect(out.CopyPartResult?.ETag).toMatch(/^"[0-9a-f]{32}"$/);
      await env.s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: out.CopyPartResult?.ETag }] },
        }),
      );
      const got = await env.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      expect(await got.Body?.transformToString()).toBe(want);
    }
  });

  it('a suffix, open or out-of-bounds copy range is 400 InvalidArgument', async () => {
    for (const range of ['bytes=-5', 'bytes=3-', 'bytes=0-26', 'bytes=5-2']) {
      const { UploadId, part } = await copyPart(env.s3, 'bad-range.txt', range);
      const err = await s3Error(part);
      expect(err.$metadata.httpStatusCode, range).toBe(400);
      expect(err.name, range).toBe('InvalidArgument');
      await env.s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'bad-range.txt', UploadId }));
    }
  });

  it('a session user cannot copy a source their policies do not let them read', async () => {
    const { UploadId, part } = await copyPart(userA, 'stolen.txt');
    const err = await s3Error(part);
    expect(err.name).toBe('NoSuchKey');
    await userA.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'stolen.txt', UploadId }));
  });
});

describe('ListMultipartUploads', () => {
  it('orders by key then creation and pages by KeyMarker / UploadIdMarker', async () => {
    const prefix = `mpl-${uuid().slice(0, 6)}/`;
    const ids: Record<string, string[]> = { a: [], b: [] };
    for (const k of ['b', 'a', 'a']) {
      const c = await env.s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: `${prefix}${k}` }));
      ids[k]?.push(must(c.UploadId));
    }
    const all = await env.s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
    expect(all.IsTruncated).toBe(false);
    expect(all.Uploads?.map((u) => [u.Key, u.UploadId])).toEqual([
      [`${prefix}a`, ids.a?.[0]],
      [`${prefix}a`, ids.a?.[1]],
      [`${prefix}b`, ids.b?.[0]],
    ]);

    const first = await env.s3.send(
      new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix, MaxUploads: 1 }),
    );
    expect(first.IsTruncated).toBe(true);
    expect(first.NextKeyMarker).toBe(`${prefix}a`);
    expect(first.NextUploadIdMarker).toBe(ids.a?.[0]);
    // Both markers: the next upload of the same key.
    const second = await env.s3.send(
      new ListMultipartUploadsCommand({
        Bucket: bucket,
        Prefix: prefix,
        MaxUploads: 1,
        KeyMarker: first.NextKeyMarker,
        UploadIdMarker: first.NextUploadIdMarker,
      }),
    );
    expect(second.Uploads?.map((u) => u.UploadId)).toEqual([ids.a?.[1]]);
    // KeyMarker alone: past every upload of that key.
    const byKey = await env.s3.send(
      new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker: `${prefix}a` }),
    );
    expect(byKey.KeyMarker).toBe(`${prefix}a`);
    expect(byKey.Uploads?.map((u) => u.Key)).toEqual([`${prefix}b`]);
    expect(byKey.IsTruncated).toBe(false);

    const rolled = await env.s3.send(
      new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: 'mpl-', Delimiter: '/' }),
    );
    expect(rolled.CommonPrefixes?.map((p) => p.Prefix)).toContain(prefix);
    expect(rolled.Uploads ?? []).toEqual([]);

    for (const [k, list] of Object.entries(ids))
      for (const UploadId of list)
        await env.s3.send(
          new AbortMultipartUploadCommand({ Bucket: bucket, Key: `${prefix}${k}`, UploadId }),
        );
    const after = await env.s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
    expect(after.Uploads ?? []).toEqual([]);
  });

  it('a session user sees only their own uploads', async () => {
    const key = `own-${uuid().slice(0, 6)}.txt`;
    const mine = await userA.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
    const seenByB = await userB.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }));
    expect(seenByB.Uploads ?? []).toEqual([]);
    const seenByA = await userA.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }));
    expect(seenByA.Uploads?.map((u) => u.UploadId)).toEqual([mine.UploadId]);
    await userA.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: mine.UploadId }));
  });
});

describe('aws-chunked bodies that declare a trailer (x-amz-trailer)', () => {
  const decode = async (body: string, trailer?: string) => {
    const out: Buffer[] = [];
    for await (const c of Readable.from([Buffer.from(body)]).pipe(new AwsChunkedDecoder(undefined, trailer)))
      out.push(c as Buffer);
    return Buffer.concat(out).toString();
  };

  it('decode when the declared trailer follows the last frame', async () => {
    expect(
      await decode('3\r\nabc\r\n0\r\nx-amz-checksum-crc32:NSRBwg==\r\n\r\n', 'x-amz-checksum-crc32'),
    ).toBe('abc');
    expect(await decode('3\r\nabc\r\n0\r\n\r\n')).toBe('abc');
  });

  it('fail when the trailer block is missing, so nothing is stored', async () => {
    await expect(decode('3\r\nabc\r\n0\r\n\r\n', 'x-amz-checksum-crc32')).rejects.toMatchObject({
      code: 'InvalidArgument',
    });
  });
});

describe('a bad aws-chunked body from a session user', () => {
  it('is a 400 and the server goes on (the decoder failing before the write took it was an unhandled error that ended the process)', async () => {
    const token = await env.h.userToken(uuid());
    const url = new URL(`${env.endpoint}/${bucket}/chunked.bin`);
    const signer = new SignatureV4({
      credentials: {
        accessKeyId: env.h.project.ref,
        secretAccessKey: env.h.project.anonKey,
        sessionToken: token,
      },
      region: 'local',
      service: 's3',
      sha256: NodeSha256,
      uriEscapePath: false,
    });
    const send = async (body: string) => {
      const signed = await signer.sign({
        method: 'PUT',
        protocol: 'http:',
        hostname: url.hostname,
        port: Number(url.port),
        path: url.pathname,
        query: {},
        headers: {
          host: url.host,
          'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
          'content-encoding': 'aws-chunked',
          'x-amz-decoded-content-length': '3',
          'x-amz-trailer': 'x-amz-checksum-crc32',
        },
      });
      return fetch(url, { method: 'PUT', headers: signed.headers as Record<string, string>, body });
    };
    for (const body of ['3\r\nabc\r\n0\r\n\r\n', '3\r\nabc\r\n', 'zz\r\nabc']) {
      const res = await send(body);
      expect(res.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(res.status, JSON.stringify(body)).toBeLessThan(500);
      await res.text();
    }
    const alive = await env.s3.send(new GetBucketVersioningCommand({ Bucket: bucket }));
    expect(alive.$metadata.httpStatusCode).toBe(200);
  });
});
