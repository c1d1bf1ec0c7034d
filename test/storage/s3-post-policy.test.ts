/**
 * Browser uploads with an S3 POST policy (AWS SigV4 POST): the form is built here the way a server
 * hands one to a browser — a base64 JSON policy signed with the SigV4 signing key — and posted with
 * fetch. Proves: a valid form stores the object with its type and x-amz-meta-*; the policy's
 * conditions, expiry, content-length-range and field coverage are enforced; a tampered policy or
 * another key's signature is refused; session credentials write as the user (RLS applies).
 */
import { createHmac } from 'node:crypto';
import { CreateBucketCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { bucketName, uuid } from '../support/storage.js';
import { s3Error, useS3Platform } from './s3-support.js';

const env = useS3Platform();
let bucket: string;

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

interface FormOptions {
  key: string;
  accessKey?: string;
  secret?: string;
  sessionToken?: string;
  conditions?: unknown[];
  fields?: Record<string, string>;
  expiresInMs?: number;
  body?: Buffer;
  tamper?: (policy: string) => string;
}

function form(o: FormOptions): FormData {
  const now = new Date();
  const date = now.toISOString().slice(0, 10).replace(/-/g, '');
  const longDate = `${date}T000000Z`;
  const accessKey = o.accessKey ?? env.keys.access_key;
  const secret = o.secret ?? env.keys.secret_key;
  const credential = `${accessKey}/${date}/local/s3/aws4_request`;
  const fields: Record<string, string> = {
    key: o.key,
    'Content-Type': 'text/plain',
    'x-amz-meta-origin': 'browser',
    ...o.fields,
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Credential': credential,
    'X-Amz-Date': longDate,
    ...(o.sessionToken ? { 'X-Amz-Security-Token': o.sessionToken } : {}),
  };
  const conditions = o.conditions ?? [
    { bucket },
    ['eq', '$key', o.key],
    ['starts-with', '$Content-Type', 'text/'],
    { 'x-amz-meta-origin': 'browser' },
    { 'x-amz-algorithm': 'AWS4-HMAC-SHA256' },
    { 'x-amz-credential': credential },
    { 'x-amz-date': longDate },
    ...(o.sessionToken ? [{ 'x-amz-security-token': o.sessionToken }] : []),
  ];
  const policyJson = JSON.stringify({
    expiration: new Date(now.getTime() + (o.expiresInMs ?? 60_000)).toISOString(),
    conditions,
  });
  const policy = Buffer.from(policyJson).toString('base64');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), 'local'), 's3'), 'aws4_request');
  const signature = hmac(key, policy).toString('hex');
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.set(k, v);
  fd.set('Policy', o.tamper ? o.tamper(policy) : policy);
  fd.set('X-Amz-Signature', signature);
  fd.set(
    'file',
    new Blob([new Uint8Array(o.body ?? Buffer.from('posted bytes'))], { type: 'text/plain' }),
    'f.txt',
  );
  return fd;
}

const post = (fd: FormData) => fetch(`${env.endpoint}/${bucket}`, { method: 'POST', body: fd });

beforeAll(async () => {
  bucket = bucketName('post');
  await env.s3.send(new CreateBucketCommand({ Bucket: bucket }));
});

describe('S3 POST policy uploads', () => {
  it('a signed form stores the object with its Content-Type and x-amz-meta-* (200, as the reference)', async () => {
    const res = await post(form({ key: 'a/posted.txt' }));
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    const head = await env.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'a/posted.txt' }));
    expect(head.ContentLength).toBe('posted bytes'.length);
    expect(head.ContentType).toBe('text/plain');
    expect(head.Metadata).toEqual({ origin: 'browser' });
    const created = await post(
      form({ key: 'a/201.txt', fields: { success_action_status: '201' }, conditions: undefined }),
    );
    // success_action_status is a form field the default policy does not name: refused as extra input.
    expect(created.status).toBe(403);
  });

  it('refuses a condition that does not hold, an extra field, an expired policy, a size outside the range', async () => {
    const cases: Array<[string, FormData, number, string]> = [
      [
        'type',
        form({ key: 'x.txt', fields: { 'Content-Type': 'image/png' } }),
        403,
        'Policy Condition failed',
      ],
      ['extra field', form({ key: 'x.txt', fields: { 'x-amz-meta-extra': '1' } }), 403, 'Extra input fields'],
      ['expired', form({ key: 'x.txt', expiresInMs: -1000 }), 403, 'Policy expired'],
      [
        'too large',
        form({
          key: 'x.txt',
          body: Buffer.alloc(100),
          conditions: [
            { bucket },
            ['starts-with', '$key', ''],
            ['starts-with', '$Content-Type', ''],
            ['starts-with', '$x-amz-meta-origin', ''],
            ['starts-with', '$x-amz-algorithm', ''],
            ['starts-with', '$x-amz-credential', ''],
            ['starts-with', '$x-amz-date', ''],
            ['content-length-range', 0, 10],
          ],
        }),
        413,
        'EntityTooLarge',
      ],
    ];
    for (const [name, fd, status, text] of cases) {
      const res = await post(fd);
      expect(res.status, name).toBe(status);
      expect(await res.text(), name).toContain(text);
    }
    const err = await s3Error(env.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'x.txt' })));
    expect(err.$metadata.httpStatusCode).toBe(404);
  });

  it('refuses a tampered policy, a wrong secret and an unknown access key', async () => {
    const loosened = (p: string) =>
      Buffer.from(
        Buffer.from(p, 'base64').toString().replace('"eq","$key","t.txt"', '"starts-with","$key",""'),
      ).toString('base64');
    const tampered = await post(form({ key: 't.txt', tamper: loosened }));
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain('SignatureDoesNotMatch');
    const wrong = await post(form({ key: 't.txt', secret: 'f'.repeat(64) }));
    expect(wrong.status).toBe(403);
    const unknown = await post(form({ key: 't.txt', accessKey: 'a'.repeat(32) }));
    expect(unknown.status).toBe(403);
    expect(await unknown.text()).toContain('InvalidAccessKeyId');
  });

  it('session credentials write as the user: RLS decides', async () => {
    const token = await env.h.userToken(uuid());
    const session = { accessKey: env.h.project.ref, secret: env.h.project.anonKey, sessionToken: token };
    const denied = await post(form({ key: 'user.txt', ...session }));
    expect(denied.status).toBe(403);
    expect(await denied.text()).toContain('row-level security');
    await env.h.sql(
      `create policy "post all" on storage.objects for all to authenticated using (bucket_id = '${bucket}') with check (bucket_id = '${bucket}')`,
    );
    const allowed = await post(form({ key: 'user.txt', ...session }));
    expect(allowed.status, await allowed.clone().text()).toBe(200);
  });
});
