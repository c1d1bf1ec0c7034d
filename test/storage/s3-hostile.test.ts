/**
 * Hostile and broken input on the S3 protocol: malformed signatures and presigned URLs, bad list
 * parameters, broken multipart sequences, copy sources that try to leave their bucket, oversized
 * DeleteObjects, bad ranges. Each answer is S3 XML with the code and status S3 (and the reference)
 * give; nothing answers 500 and nothing is left behind.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { request } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { beforeAll, describe, expect, it } from 'vitest';
import { NodeSha256 } from '../../src/storage/s3/sigv4.js';
import { bucketName } from '../support/storage.js';
import { must, s3Error, useS3Platform } from './s3-support.js';
import { eventually } from '../support/eventually.js';

const env = useS3Platform();

interface RawOpts {
  method?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string;
}

/** Headers signed with the test access key for exactly the path given (no normalisation). */
async function signedHeaders(path: string, o: RawOpts = {}): Promise<Record<string, string>> {
  const url = new URL(env.endpoint);
  const signer = new SignatureV4({
    credentials: { accessKeyId: env.keys.access_key, secretAccessKey: env.keys.secret_key },
    region: 'local',
    service: 's3',
    sha256: NodeSha256,
    uriEscapePath: false,
  });
  const req = await signer.sign({
    method: o.method ?? 'GET',
    protocol: 'http:',
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname + path,
    query: o.query ?? {},
    headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...o.headers },
  });
  return req.headers;
}

/** A request signed with the test access key over exactly the path given (no normalisation). */
async function signed(path: string, o: RawOpts = {}): Promise<Response> {
  const url = new URL(env.endpoint);
  const headers = await signedHeaders(path, o);
  const qs = new URLSearchParams(o.query ?? {}).toString();
  // node:http sends the path as given (fetch would resolve `%2E%2E` segments before sending).
  return new Promise<Response>((resolve, reject) => {
    const out = request(
      {
        host: url.hostname,
        port: url.port,
        method: o.method ?? 'GET',
        path: `${url.pathname}${path}${qs ? `?${qs}` : ''}`,
        headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
          const body = o.method === 'HEAD' || res.statusCode === 204 ? null : Buffer.concat(chunks);
          resolve(new Response(body, { status: res.statusCode ?? 0, headers }));
        });
      },
    );
    out.on('error', reject);
    out.end(o.body);
  });
}

async function xmlError(res: Response): Promise<{ status: number; code: string; message: string }> {
  const text = await res.text();
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/xml/);
  return {
    status: res.status,
    code: /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? text,
    message: /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? '',
  };
}

const amzDate = (d = new Date()) => d.toISOString().replace(/[-:]|\.\d{3}/g, '');

const complete = (key: string, id: string, parts: Array<{ PartNumber: number; ETag: string }>) =>
  env.s3.send(
    new CompleteMultipartUploadCommand({
      Bucket: b,
      Key: key,
      UploadId: id,
      MultipartUpload: { Parts: parts },
    }),
  );

let b: string;
beforeAll(async () => {
  b = bucketName('s3x');
  await env.s3.send(new CreateBucketCommand({ Bucket: b }));
  await env.s3.send(new PutObjectCommand({ Bucket: b, Key: 'ten.txt', Body: '0123456789' }));
});

describe('malformed SigV4', () => {
  it('Authorization headers with missing parts, another algorithm or a bad scope are 400 XML', async () => {
    const date = amzDate();
    const cred = `${env.keys.access_key}/${date.slice(0, 8)}/local/s3/aws4_request`;
    const sig = `Signature=${'0'.repeat(64)}`;
    const cases: Array<[string, Record<string, string>, string]> = [
      // No SignedHeaders.
      [`AWS4-HMAC-SHA256 Credential=${cred}, ${sig}`, {}, 'InvalidSignature'],
      // Nothing after the algorithm.
      ['AWS4-HMAC-SHA256', {}, 'InvalidSignature'],
      // Another algorithm, another scheme.
      [`AWS4-HMAC-SHA512 Credential=${cred}, SignedHeaders=host, ${sig}`, {}, 'InvalidSignature'],
      ['Bearer abc', {}, 'InvalidSignature'],
      // Scope with too few parts, another service, another day than X-Amz-Date.
      [
        `AWS4-HMAC-SHA256 Credential=${env.keys.access_key}/local/s3, SignedHeaders=host, ${sig}`,
        {},
        'InvalidSignature',
      ],
      [
        `AWS4-HMAC-SHA256 Credential=${env.keys.access_key}/${date.slice(0, 8)}/local/ec2/aws4_request, SignedHeaders=host, ${sig}`,
        {},
        'InvalidSignature',
      ],
      [
        `AWS4-HMAC-SHA256 Credential=${env.keys.access_key}/20000101/local/s3/aws4_request, SignedHeaders=host, ${sig}`,
        {},
        'InvalidSignature',
      ],
      // No X-Amz-Date; a date that is not one.
      [
        `AWS4-HMAC-SHA256 Credential=${cred}, SignedHeaders=host, ${sig}`,
        { 'x-amz-date': '' },
        'InvalidSignature',
      ],
      [
        `AWS4-HMAC-SHA256 Credential=${env.keys.access_key}/yesterda/local/s3/aws4_request, SignedHeaders=host, ${sig}`,
        { 'x-amz-date': 'yesterday' },
        'InvalidSignature',
      ],
    ];
    for (const [authorization, extra, code] of cases) {
      const headers: Record<string, string> = { authorization, 'x-amz-date': date, ...extra };
      if (headers['x-amz-date'] === '') delete headers['x-amz-date'];
      const e = await xmlError(await fetch(`${env.endpoint}/`, { headers }));
      expect({ authorization, ...e }).toMatchObject({ status: 400, code });
    }
  });

  it('X-Amz-Date far in the past or future is RequestTimeTooSkewed (403)', async () => {
    for (const when of [new Date('2001-01-01T00:00:00Z'), new Date(Date.now() + 86400_000 * 365)]) {
      const d = amzDate(when);
      const res = await fetch(`${env.endpoint}/`, {
        headers: {
          authorization: `AWS4-HMAC-SHA256 Credential=${env.keys.access_key}/${d.slice(0, 8)}/local/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`,
          'x-amz-date': d,
        },
      });
      expect(await xmlError(res)).toMatchObject({ status: 403, code: 'RequestTimeTooSkewed' });
    }
  });

  it('presigned URLs with X-Amz-Expires 0, negative, beyond 7 days or not a number are refused', async () => {
    const d = amzDate();
    for (const expires of ['0', '-5', '604801', 'abc', '1e3', '']) {
      const q = new URLSearchParams({
        'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
        'X-Amz-Credential': `${env.keys.access_key}/${d.slice(0, 8)}/local/s3/aws4_request`,
        'X-Amz-Date': d,
        'X-Amz-Expires': expires,
        'X-Amz-SignedHeaders': 'host',
        'X-Amz-Signature': '0'.repeat(64),
      });
      const e = await xmlError(await fetch(`${env.endpoint}/${b}/ten.txt?${q}`));
      expect(e.status, expires).toBe(400);
      expect(['InvalidSignature', 'ExpiredToken', 'AuthorizationQueryParametersError']).toContain(e.code);
    }
  });
});

describe('keys and lists', () => {
  it('NUL and dot segments in keys are InvalidKey, on every operation', async () => {
    for (const [method, path] of [
      ['PUT', `/${b}/a%00b`],
      ['GET', `/${b}/a/%2E%2E/ten.txt`],
      ['PUT', `/${b}/a/%2E%2E/%2E%2E/x`],
      ['DELETE', `/${b}/./ten.txt`],
      ['HEAD', `/${b}/a/%2E/b`],
    ] as const) {
      const res = await signed(path, { method, body: method === 'PUT' ? 'x' : undefined });
      expect(res.status, `${method} ${path}`).toBe(400);
      if (method !== 'HEAD') expect((await xmlError(res)).code).toBe('InvalidKey');
    }
    const listed = await env.s3.send(new ListObjectsV2Command({ Bucket: b }));
    expect((listed.Contents ?? []).map((c) => c.Key)).toEqual(['ten.txt']);
  });

  it('ListObjectsV2: max-keys negative / not a number is InvalidArgument, huge is capped; garbage tokens are refused', async () => {
    for (const maxKeys of ['-1', 'ten', '1.5', '']) {
      const e = await xmlError(await signed(`/${b}`, { query: { 'list-type': '2', 'max-keys': maxKeys } }));
      expect({ maxKeys, ...e }).toMatchObject({ status: 400, code: 'InvalidArgument' });
    }
    const huge = await signed(`/${b}`, {
      query: { 'list-type': '2', 'max-keys': '99999999999999999999999' },
    });
    expect(huge.status).toBe(200);
    expect(await huge.text()).toContain('<MaxKeys>1000</MaxKeys>');
    const garbage = [
      '!!!not-base64!!!',
      Buffer.from('v2:x').toString('base64url'),
      Buffer.from('v1:\u0000').toString('base64url'),
      Buffer.from([0x76, 0x31, 0x3a, 0xff, 0xfe]).toString('base64url'),
      'x'.repeat(5000),
    ];
    for (const token of garbage) {
      const e = await xmlError(
        await signed(`/${b}`, { query: { 'list-type': '2', 'continuation-token': token } }),
      );
      expect({ token: token.slice(0, 20), ...e }).toMatchObject({ status: 400, code: 'InvalidArgument' });
    }
  });
});

describe('multipart sequences', () => {
  async function started(key: string): Promise<{ id: string; etags: string[] }> {
    const up = await env.s3.send(new CreateMultipartUploadCommand({ Bucket: b, Key: key }));
    const id = must(up.UploadId);
    const etags: string[] = [];
    for (const n of [1, 2]) {
      const p = await env.s3.send(
        new UploadPartCommand({
          Bucket: b,
          Key: key,
          UploadId: id,
          PartNumber: n,
          Body: Buffer.alloc(n === 1 ? 5 * 1024 * 1024 : 10, n),
        }),
      );
      etags.push(must(p.ETag));
    }
    return { id, etags };
  }

  it('complete with missing, unordered, duplicated, wrong-ETag or out-of-range parts is refused; the upload stays usable', async () => {
    const key = 'mp/hostile.bin';
    const { id, etags } = await started(key);
    const [e1, e2] = etags as [string, string];
    const cases: Array<[Array<{ PartNumber: number; ETag: string }>, string]> = [
      [
        [
          { PartNumber: 1, ETag: e1 },
          { PartNumber: 3, ETag: e2 },
        ],
        'InvalidPart',
      ],
      [
        [
          { PartNumber: 2, ETag: e2 },
          { PartNumber: 1, ETag: e1 },
        ],
        'InvalidPartOrder',
      ],
      [
        [
          { PartNumber: 1, ETag: e1 },
          { PartNumber: 1, ETag: e1 },
        ],
        'InvalidPartOrder',
      ],
      [
        [
          { PartNumber: 1, ETag: e1 },
          { PartNumber: 2, ETag: '"0123"' },
        ],
        'InvalidPart',
      ],
      [[{ PartNumber: 0, ETag: e1 }], 'InvalidArgument'],
      [[{ PartNumber: 10001, ETag: e1 }], 'InvalidArgument'],
    ];
    for (const [parts, code] of cases) {
      const err = await s3Error(complete(key, id, parts));
      expect({
        parts: parts.map((p) => p.PartNumber),
        code: err.name,
        status: err.$metadata.httpStatusCode,
      }).toEqual({
        parts: parts.map((p) => p.PartNumber),
        code,
        status: 400,
      });
    }
    for (const n of [0, 10001]) {
      const err = await s3Error(
        env.s3.send(new UploadPartCommand({ Bucket: b, Key: key, UploadId: id, PartNumber: n, Body: 'x' })),
      );
      expect(err.name).toBe('InvalidArgument');
    }
    const done = await complete(key, id, [
      { PartNumber: 1, ETag: e1 },
      { PartNumber: 2, ETag: e2 },
    ]);
    expect(done.ETag).toBeTruthy();
    const got = await env.s3.send(new GetObjectCommand({ Bucket: b, Key: key }));
    expect(got.ContentLength).toBe(5 * 1024 * 1024 + 10);
    await got.Body?.transformToByteArray();
  });

  it('UploadPart to an aborted upload and a second abort are NoSuchUpload (404)', async () => {
    const key = 'mp/aborted.bin';
    const { id } = await started(key);
    await env.s3.send(new AbortMultipartUploadCommand({ Bucket: b, Key: key, UploadId: id }));
    const again = await s3Error(
      env.s3.send(new AbortMultipartUploadCommand({ Bucket: b, Key: key, UploadId: id })),
    );
    expect([again.name, again.$metadata.httpStatusCode]).toEqual(['NoSuchUpload', 404]);
    const part = await s3Error(
      env.s3.send(
        new UploadPartCommand({
          Bucket: b,
          Key: key,
          UploadId: id,
          PartNumber: 3,
          Body: Buffer.alloc(6 << 20),
        }),
      ),
    );
    expect([part.name, part.$metadata.httpStatusCode]).toEqual(['NoSuchUpload', 404]);
    const done = await s3Error(complete(key, id, [{ PartNumber: 1, ETag: '"x"' }]));
    expect([done.name, done.$metadata.httpStatusCode]).toEqual(['NoSuchUpload', 404]);
    const rows = await env.h.sql(
      'select count(*)::int as n from storage.s3_multipart_uploads_parts where upload_id = $1',
      [id],
    );
    expect(rows[0]?.n).toBe(0);
  });
});

/** Sends `sent` of the `declared` bytes of a signed PUT, then drops the connection. */
async function cutPut(path: string, query: Record<string, string>, declared: number, sent: number) {
  const url = new URL(env.endpoint);
  const headers = await signedHeaders(path, {
    method: 'PUT',
    query,
    headers: { 'content-length': String(declared) },
  });
  const qs = new URLSearchParams(query).toString();
  await new Promise<void>((resolve) => {
    const req = request({
      host: url.hostname,
      port: url.port,
      method: 'PUT',
      path: `${url.pathname}${path}${qs ? `?${qs}` : ''}`,
      headers,
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.write(Buffer.alloc(sent, 7), () => setTimeout(() => req.destroy(), 200));
  });
}

describe('clients that go away', () => {
  it('PutObject and UploadPart cut mid-body leave no row, no part, no temporary file; the upload goes on', async () => {
    await cutPut(`/${b}/cut.bin`, {}, 1 << 20, 100_000);
    const up = await env.s3.send(new CreateMultipartUploadCommand({ Bucket: b, Key: 'cut-mp.bin' }));
    const id = must(up.UploadId);
    await cutPut(`/${b}/cut-mp.bin`, { partNumber: '1', uploadId: id }, 1 << 20, 100_000);
    const tmp = async () => (await env.h.storedKeys()).filter((k) => k.startsWith('.tmp/'));
    await eventually(async () => (await tmp()).length === 0, { timeoutMs: 2_000 }).catch(() => {});
    expect(await tmp()).toEqual([]);
    expect(
      await env.h.sql('select 1 from storage.objects where bucket_id = $1 and name = $2', [b, 'cut.bin']),
    ).toEqual([]);
    expect(
      await env.h.sql('select 1 from storage.s3_multipart_uploads_parts where upload_id = $1', [id]),
    ).toEqual([]);
    const part = await env.s3.send(
      new UploadPartCommand({ Bucket: b, Key: 'cut-mp.bin', UploadId: id, PartNumber: 1, Body: 'whole' }),
    );
    await complete('cut-mp.bin', id, [{ PartNumber: 1, ETag: must(part.ETag) }]);
    const got = await env.s3.send(new GetObjectCommand({ Bucket: b, Key: 'cut-mp.bin' }));
    expect(await got.Body?.transformToString()).toBe('whole');
    const stored = await env.h.storedKeys();
    expect(stored.filter((k) => k.includes(`${b}/cut.bin`))).toEqual([]);
    expect(stored.filter((k) => k.includes(`${b}/cut-mp.bin`))).toHaveLength(1);
  });
});

describe('copy, delete, range', () => {
  it('CopyObject: a source with dot segments or a bad bucket name is refused; another bucket under RLS is AccessDenied/NoSuchKey', async () => {
    for (const source of [
      `${b}/a/../ten.txt`,
      `${b}/a/%2E%2E/ten.txt`,
      `../${b}/ten.txt`,
      `%2E%2E/ten.txt`,
      `${b}`,
      `${b}/`,
      `${b}/a%00b`,
      `%E0%A4%A/ten.txt`,
    ]) {
      const res = await signed(`/${b}/copy-dst.txt`, {
        method: 'PUT',
        headers: { 'x-amz-copy-source': source },
      });
      const e = await xmlError(res);
      expect({ source, status: e.status }).toEqual({ source, status: 400 });
      expect(['InvalidKey', 'InvalidBucketName', 'InvalidArgument']).toContain(e.code);
    }
    // A raw `?` belongs to the key; only a trailing `?versionId=` is not part of it.
    await env.s3.send(new PutObjectCommand({ Bucket: b, Key: 'q?x.txt', Body: 'question' }));
    for (const CopySource of [`${b}/q?x.txt`, `${b}/q%3Fx.txt?versionId=null`]) {
      await env.s3.send(new CopyObjectCommand({ Bucket: b, Key: 'q-copy.txt', CopySource }));
      const copied = await env.s3.send(new GetObjectCommand({ Bucket: b, Key: 'q-copy.txt' }));
      expect(await copied.Body?.transformToString()).toBe('question');
      await env.s3.send(new PutObjectCommand({ Bucket: b, Key: 'q-copy.txt', Body: '' }));
    }
    // A user (session token) who can write their own bucket's keys but cannot read another bucket.
    const other = bucketName('s3secret');
    await env.s3.send(new CreateBucketCommand({ Bucket: other }));
    await env.s3.send(new PutObjectCommand({ Bucket: other, Key: 'secret.txt', Body: 'secret' }));
    const sub = crypto.randomUUID();
    await env.h.sql(
      `create policy s3x_ins on storage.objects for insert to authenticated with check (bucket_id = '${b}');
       create policy s3x_sel on storage.objects for select to authenticated using (bucket_id = '${b}');`,
    );
    try {
      const user = env.client({
        accessKeyId: env.h.project.ref,
        secretAccessKey: env.h.project.anonKey,
        sessionToken: await env.h.userToken(sub),
      });
      const err = await s3Error(
        user.send(new CopyObjectCommand({ Bucket: b, Key: 'stolen.txt', CopySource: `${other}/secret.txt` })),
      );
      expect(['NoSuchKey', 'AccessDenied']).toContain(err.name);
      expect([403, 404]).toContain(err.$metadata.httpStatusCode);
      user.destroy();
    } finally {
      await env.h.sql('drop policy s3x_ins on storage.objects; drop policy s3x_sel on storage.objects');
    }
    const dst = await env.h.sql('select name from storage.objects where bucket_id = $1 order by name', [b]);
    expect(dst.map((r) => r.name)).not.toContain('stolen.txt');
  });

  it('CopyObject REPLACE: a malformed or bucket-disallowed Content-Type is refused as PutObject refuses it', async () => {
    const typed = bucketName('s3typed');
    await env.h.service.createBucket(typed, { public: false, allowedMimeTypes: ['text/plain'] });
    await env.s3.send(
      new PutObjectCommand({ Bucket: typed, Key: 'a.txt', Body: 'text', ContentType: 'text/plain' }),
    );
    // Malformed: Fastify's media-type check (415); not allowed by the bucket: InvalidMimeType.
    for (const ContentType of ['not a mime type', 'image/png']) {
      const put = await s3Error(
        env.s3.send(new PutObjectCommand({ Bucket: typed, Key: 'p.txt', Body: 'x', ContentType })),
      );
      const copy = await s3Error(
        env.s3.send(
          new CopyObjectCommand({
            Bucket: typed,
            Key: 'b.txt',
            CopySource: `${typed}/a.txt`,
            MetadataDirective: 'REPLACE',
            ContentType,
          }),
        ),
      );
      expect([copy.name, copy.$metadata.httpStatusCode]).toEqual([put.name, put.$metadata.httpStatusCode]);
      expect(copy.message).toBe(put.message);
    }
    const rows = await env.h.sql('select name from storage.objects where bucket_id = $1 order by name', [
      typed,
    ]);
    expect(rows.map((r) => r.name)).toEqual(['a.txt']);
  });

  it('DeleteObjects: malformed XML, no keys, 1001 keys are MalformedXML; nothing is deleted', async () => {
    const bodies = [
      '<Delete><Object><Key>ten.txt</Key></Object>',
      'not xml at all',
      '<Delete></Delete>',
      '<Delete>text</Delete>',
      `<Delete>${'<Object><Key>ten.txt</Key></Object>'.repeat(1001)}</Delete>`,
    ];
    for (const body of bodies) {
      const e = await xmlError(await signed(`/${b}`, { method: 'POST', query: { delete: '' }, body }));
      expect({ body: body.slice(0, 30), ...e }).toMatchObject({ status: 400, code: 'MalformedXML' });
    }
    const got = await env.s3.send(new GetObjectCommand({ Bucket: b, Key: 'ten.txt' }));
    expect(await got.Body?.transformToString()).toBe('0123456789');
  });

  it('range GET: unsatisfiable is 416 InvalidRange; a satisfiable suffix works', async () => {
    const bad = await s3Error(
      env.s3.send(new GetObjectCommand({ Bucket: b, Key: 'ten.txt', Range: 'bytes=20-30' })),
    );
    expect([bad.name, bad.$metadata.httpStatusCode]).toEqual(['InvalidRange', 416]);
    const ok = await env.s3.send(new GetObjectCommand({ Bucket: b, Key: 'ten.txt', Range: 'bytes=-3' }));
    expect(await ok.Body?.transformToString()).toBe('789');
  });
});
