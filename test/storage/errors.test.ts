/** Every error code of the Storage API with its exact envelope and HTTP status. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { rm } from 'node:fs/promises';
import { startStorage, bucketName, type StorageHarness } from '../support/storage.js';
import { signJwt } from '../../src/auth/jwt.js';

let h: StorageHarness;
let b: string;
let svc: string;
beforeAll(async () => {
  h = await startStorage('file');
  svc = h.project.serviceRoleKey;
  b = bucketName('err');
  await h.service.createBucket(b, { public: false, fileSizeLimit: 10, allowedMimeTypes: ['text/plain'] });
  await h.service.from(b).upload('exists.txt', 'x', { contentType: 'text/plain' });
});
afterAll(async () => h?.close());

const json = (body: unknown) => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

async function expectError(res: Response, http: number, body: Record<string, string>) {
  expect(res.status).toBe(http);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await res.json()).toEqual(body);
}

describe('error envelope', () => {
  it('NoSuchBucket', async () => {
    await expectError(await h.api('/bucket/nope', { token: svc }), 400, {
      statusCode: '404',
      error: 'Bucket not found',
      message: 'Bucket not found',
      code: 'NoSuchBucket',
    });
    await expectError(await h.api('/object/public/nope/x.txt'), 400, {
      statusCode: '404',
      error: 'Bucket not found',
      message: 'Bucket not found',
      code: 'NoSuchBucket',
    });
  });

  it('NoSuchKey, and a bare 400 for HEAD', async () => {
    await expectError(await h.api(`/object/${b}/missing.txt`, { token: svc }), 400, {
      statusCode: '404',
      error: 'not_found',
      message: 'Object not found',
      code: 'NoSuchKey',
    });
    const head = await h.api(`/object/${b}/missing.txt`, { method: 'HEAD', token: svc });
    expect(head.status).toBe(400);
    expect(await head.text()).toBe('');
  });

  it('NoSuchKey when the row exists but the bytes are gone', async () => {
    await h.service.from(b).upload('gone.txt', 'x', { contentType: 'text/plain' });
    const [row] = await h.sql<{ version: string }>(
      'select version from storage.objects where bucket_id = $1 and name = $2',
      [b, 'gone.txt'],
    );
    await rm(`${h.project.filesDir}/storage/buckets/${b}/gone.txt/~${row!.version}`);
    const res = await h.api(`/object/${b}/gone.txt`, { token: svc });
    expect(res.headers.get('cache-control')).toBe('no-store');
    await expectError(res, 400, {
      statusCode: '404',
      error: 'Not found',
      message: 'The resource was not found',
      code: 'NoSuchKey',
    });
  });

  it('BucketAlreadyExists, KeyAlreadyExists, ResourceAlreadyExists, ResourceNotEmpty', async () => {
    await expectError(await h.api('/bucket', { method: 'POST', token: svc, ...json({ name: b }) }), 400, {
      statusCode: '409',
      error: 'Duplicate',
      message: 'The resource already exists',
      code: 'BucketAlreadyExists',
    });
    await expectError(
      await h.api(`/object/${b}/exists.txt`, {
        method: 'POST',
        token: svc,
        headers: { 'content-type': 'text/plain' },
        body: 'y',
      }),
      400,
      {
        statusCode: '409',
        error: 'Duplicate',
        message: 'The resource already exists',
        code: 'KeyAlreadyExists',
      },
    );
    await h.service.from(b).upload('other.txt', 'z', { contentType: 'text/plain' });
    await expectError(
      await h.api('/object/move', {
        method: 'POST',
        token: svc,
        ...json({ bucketId: b, sourceKey: 'other.txt', destinationKey: 'exists.txt' }),
      }),
      400,
      {
        statusCode: '409',
        error: 'Duplicate',
        message: 'The resource already exists',
        code: 'ResourceAlreadyExists',
      },
    );
    await expectError(await h.api(`/bucket/${b}`, { method: 'DELETE', token: svc }), 400, {
      statusCode: '409',
      error: 'ResourceNotEmpty',
      message: 'The bucket you tried to delete is not empty',
      code: 'ResourceNotEmpty',
    });
  });

  it('EntityTooLarge for objects and for bucket limits above the global limit', async () => {
    const tooLarge = {
      statusCode: '413',
      error: 'Payload too large',
      message: 'The object exceeded the maximum allowed size',
      code: 'EntityTooLarge',
    };
    await expectError(
      await h.api(`/object/${b}/big.txt`, {
        method: 'POST',
        token: svc,
        headers: { 'content-type': 'text/plain' },
        body: 'x'.repeat(11),
      }),
      400,
      tooLarge,
    );
    await expectError(
      await h.api('/bucket', {
        method: 'POST',
        token: svc,
        ...json({ name: bucketName(), file_size_limit: h.tp.config.storageFileSizeLimit + 1 }),
      }),
      400,
      tooLarge,
    );
  });

  it('InvalidMimeType', async () => {
    await expectError(
      await h.api(`/object/${b}/a.png`, {
        method: 'POST',
        token: svc,
        headers: { 'content-type': 'image/png' },
        body: 'x',
      }),
      400,
      {
        statusCode: '415',
        error: 'invalid_mime_type',
        message: 'mime type image/png is not supported',
        code: 'InvalidMimeType',
      },
    );
    await expectError(
      await h.api('/bucket', {
        method: 'POST',
        token: svc,
        ...json({ name: bucketName(), allowed_mime_types: ['not a type'] }),
      }),
      400,
      {
        statusCode: '415',
        error: 'invalid_mime_type',
        message: 'mime type not a type is not supported',
        code: 'InvalidMimeType',
      },
    );
    await expectError(
      await h.api(`/object/${b}/a.txt`, {
        method: 'POST',
        token: svc,
        headers: { 'content-type': 'no slash here' },
        body: 'x',
      }),
      400,
      {
        statusCode: '415',
        error: 'invalid_mime_type',
        message: 'Invalid Content-Type header',
        code: 'InvalidMimeType',
      },
    );
  });

  it('InvalidKey and InvalidBucketName', async () => {
    await expectError(
      await h.api(`/object/${b}/caf%C3%A9.txt`, {
        method: 'POST',
        token: svc,
        headers: { 'content-type': 'text/plain' },
        body: 'x',
      }),
      400,
      {
        statusCode: '400',
        error: 'InvalidKey',
        message: 'Invalid key: café.txt',
        code: 'InvalidKey',
      },
    );
    await expectError(
      await h.api('/bucket', { method: 'POST', token: svc, ...json({ name: 'bad/name' }) }),
      400,
      {
        statusCode: '400',
        error: 'Invalid Input',
        message: 'Bucket name invalid',
        code: 'InvalidBucketName',
      },
    );
    await expectError(
      await h.api('/bucket', { method: 'POST', token: svc, ...json({ name: ' padded' }) }),
      400,
      {
        statusCode: '400',
        error: 'Invalid Input',
        message: 'Bucket name invalid',
        code: 'InvalidBucketName',
      },
    );
  });

  it('AccessDenied for bad tokens; InvalidRequest without one; 403 for empty bucket without the service role', async () => {
    const denied = (message: string) => ({
      statusCode: '403',
      error: 'Unauthorized',
      message,
      code: 'AccessDenied',
    });
    await expectError(await h.api('/bucket', { token: 'garbage' }), 400, denied('Invalid Compact JWS'));
    const wrong = await signJwt('another-secret-another-secret-another-secret', { role: 'service_role' });
    await expectError(await h.api('/bucket', { token: wrong }), 400, denied('signature verification failed'));
    const expired = await signJwt(h.project.jwtSecret, {
      role: 'authenticated',
      exp: Math.floor(Date.now() / 1000) - 10,
    });
    await expectError(
      await h.api('/bucket', { token: expired }),
      400,
      denied('"exp" claim timestamp check failed'),
    );
    await expectError(await h.api('/bucket'), 400, {
      statusCode: '400',
      error: 'Error',
      message: "headers must have required property 'authorization'",
      code: 'InvalidRequest',
    });
    await expectError(await h.api(`/bucket/${b}/empty`, { method: 'POST' }), 403, {
      statusCode: '403',
      error: 'Unauthorized',
      message: 'Access denied: JWT is not authenticated',
      code: 'AccessDenied',
    });
    await expectError(await h.api(`/bucket/${b}/empty`, { method: 'POST', token: h.project.anonKey }), 403, {
      statusCode: '403',
      error: 'Unauthorized',
      message: 'Access denied: Invalid role',
      code: 'AccessDenied',
    });
    const none = await new SignJWT({ role: 'service_role' })
      .setProtectedHeader({ alg: 'HS512' })
      .sign(new TextEncoder().encode(h.project.jwtSecret));
    expect((await h.api('/bucket', { token: none })).status).toBe(400);
  });

  it('credentials from the authorization query parameter and the apikey header', async () => {
    expect((await h.api(`/bucket/${b}?authorization=${encodeURIComponent(`Bearer ${svc}`)}`)).status).toBe(
      200,
    );
    expect((await h.api(`/bucket/${b}`, { headers: { apikey: svc } })).status).toBe(200);
  });

  it('InvalidJWT, InvalidSignature and ExpiredToken on signed URLs', async () => {
    const path = `/object/sign/${b}/exists.txt`;
    await expectError(await h.api(`${path}?token=nope`), 400, {
      statusCode: '400',
      error: 'InvalidJWT',
      message: 'Invalid Compact JWS',
      code: 'InvalidJWT',
    });
    const expired = await signJwt(h.project.jwtSecret, {
      url: `${b}/exists.txt`,
      scope: 'download',
      exp: Math.floor(Date.now() / 1000) - 5,
    });
    await expectError(await h.api(`${path}?token=${expired}`), 400, {
      statusCode: '400',
      error: 'InvalidJWT',
      message: '"exp" claim timestamp check failed',
      code: 'InvalidJWT',
    });
    const other = await signJwt(h.project.jwtSecret, { url: `${b}/other.txt`, scope: 'download' });
    await expectError(await h.api(`${path}?token=${other}`), 400, {
      statusCode: '400',
      error: 'InvalidSignature',
      message: 'Invalid signature',
      code: 'InvalidSignature',
    });
    const upload = await signJwt(h.project.jwtSecret, {
      url: `${b}/exists.txt`,
      scope: 'upload',
      upsert: false,
    });
    await expectError(await h.api(`${path}?token=${upload}`), 400, {
      statusCode: '400',
      error: 'InvalidSignature',
      message: 'Token is not scoped for download',
      code: 'InvalidSignature',
    });
    const signed = (await h.service.from(b).createSignedUrl('exists.txt', 60)).data!.signedUrl;
    const token = new URL(signed).searchParams.get('token')!;
    const [hd, payload, sig] = token.split('.');
    const forged = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    forged.url = `${b}/other.txt`;
    const tampered = [hd, Buffer.from(JSON.stringify(forged)).toString('base64url'), sig].join('.');
    await expectError(await h.api(`/object/sign/${b}/other.txt?token=${tampered}`), 400, {
      statusCode: '400',
      error: 'InvalidJWT',
      message: 'signature verification failed',
      code: 'InvalidJWT',
    });
    await expectError(await h.api(path), 400, {
      statusCode: '400',
      error: 'Error',
      message: "querystring must have required property 'token'",
      code: 'InvalidRequest',
    });
  });

  it('InvalidRequest for validation, multipart without a file, file size format; InvalidParameter', async () => {
    const v = (message: string) => ({ statusCode: '400', error: 'Error', message, code: 'InvalidRequest' });
    await expectError(
      await h.api('/bucket', { method: 'POST', token: svc, ...json({}) }),
      400,
      v("body must have required property 'name'"),
    );
    await expectError(
      await h.api(`/object/sign/${b}/exists.txt`, { method: 'POST', token: svc, ...json({}) }),
      400,
      v("body must have required property 'expiresIn'"),
    );
    await expectError(
      await h.api('/bucket?limit=0', { token: svc }),
      400,
      v('querystring/limit must be >= 1'),
    );
    await expectError(
      await h.api('/bucket', {
        method: 'POST',
        token: svc,
        ...json({ name: bucketName(), file_size_limit: '5 parsecs' }),
      }),
      400,
      {
        statusCode: '400',
        error: 'InvalidRequest',
        message: 'Invalid file size format, hint: use 20GB / 20MB / 30KB / 3B',
        code: 'InvalidRequest',
      },
    );
    const form = new FormData();
    form.append('cacheControl', '60');
    await expectError(
      await h.api(`/object/${b}/nofile.txt`, { method: 'POST', token: svc, body: form }),
      400,
      { statusCode: '400', error: 'InvalidRequest', message: 'No content provided', code: 'InvalidRequest' },
    );
    await expectError(
      await h.api(`/object/sign/${b}/exists.txt`, {
        method: 'POST',
        token: svc,
        ...json({ expiresIn: 1e15 }),
      }),
      400,
      {
        statusCode: '400',
        error: 'InvalidParameter',
        message: 'Invalid Parameter expiresIn',
        code: 'InvalidParameter',
      },
    );
  });

  it('EntityTooLarge for user metadata over 1 MiB; InvalidRequest for a bad X-Robots-Tag', async () => {
    const form = new FormData();
    form.append('metadata', JSON.stringify({ big: 'x'.repeat(1024 * 1024) }));
    form.append('', new Blob(['x'], { type: 'text/plain' }));
    await expectError(await h.api(`/object/${b}/meta.txt`, { method: 'POST', token: svc, body: form }), 400, {
      statusCode: '413',
      error: 'Payload too large',
      message: 'The user_metadata exceeded the maximum allowed size',
      code: 'EntityTooLarge',
    });
    const res = await h.api(`/object/${b}/robots.txt`, {
      method: 'POST',
      token: svc,
      headers: { 'content-type': 'text/plain', 'x-robots-tag': 'noindex<script>' },
      body: 'x',
    });
    expect(await res.json()).toMatchObject({
      statusCode: '400',
      error: 'invalid_x_robots_tag',
      code: 'InvalidRequest',
    });
    const ok = await h.api(`/object/${b}/robots.txt`, {
      method: 'POST',
      token: svc,
      headers: { 'content-type': 'text/plain', 'x-robots-tag': 'noindex, nofollow' },
      body: 'x',
    });
    expect(ok.status).toBe(200);
    expect((await h.api(`/object/${b}/robots.txt`, { token: svc })).headers.get('x-robots-tag')).toBe(
      'noindex, nofollow',
    );
  });

  it('InternalError when the backend fails, with no row written', async () => {
    const { mkdir, writeFile } = await import('node:fs/promises');
    const dir = `${h.project.filesDir}/storage/buckets/${b}`;
    await mkdir(dir, { recursive: true });
    await writeFile(`${dir}/blocked`, 'not a directory');
    await expectError(
      await h.api(`/object/${b}/blocked/x.txt`, {
        method: 'POST',
        token: svc,
        headers: { 'content-type': 'text/plain' },
        body: 'x',
      }),
      500,
      {
        statusCode: '500',
        error: 'Internal',
        message: 'Internal Server Error',
        code: 'InternalError',
      },
    );
    expect(
      await h.sql('select 1 from storage.objects where bucket_id = $1 and name = $2', [b, 'blocked/x.txt']),
    ).toEqual([]);
    expect((await h.storedKeys()).filter((k) => k.startsWith('.tmp/'))).toEqual([]);
  });

  it('database errors: DatabaseError, DatabaseTimeout (544), SlowDown (429)', async () => {
    await h.sql(`create or replace function public.raise_for_name() returns trigger language plpgsql as $$
      begin
        if new.name = 'timeout.txt' then raise exception 'slow' using errcode = '57014'; end if;
        if new.name = 'busy.txt' then raise exception 'busy' using errcode = '53300'; end if;
        if new.name = 'broken.txt' then raise exception 'broken' using errcode = 'XX000'; end if;
        return new;
      end $$`);
    await h.sql(
      'create trigger raise_for_name before insert on storage.objects for each row execute function public.raise_for_name()',
    );
    try {
      const up = (name: string) =>
        h.api(`/object/${b}/${name}`, {
          method: 'POST',
          token: svc,
          headers: { 'content-type': 'text/plain' },
          body: 'x',
        });
      const timeout = await up('timeout.txt');
      expect(timeout.status).toBe(544);
      expect(await timeout.json()).toMatchObject({ statusCode: '544', code: 'DatabaseTimeout' });
      await expectError(await up('busy.txt'), 429, {
        statusCode: '429',
        error: 'too_many_connections',
        message: 'Too many connections issued to the database',
        code: 'SlowDown',
      });
      await expectError(await up('broken.txt'), 500, {
        statusCode: '500',
        error: 'DatabaseError',
        message: 'database error, code: XX000',
        code: 'DatabaseError',
      });
    } finally {
      await h.sql('drop trigger raise_for_name on storage.objects');
    }
  });

  it('InvalidRange with HTTP 416', async () => {
    // (A satisfiable multi-range request is served whole since the shared range parser: ranges.test.ts.)
    const res = await h.api(`/object/${b}/exists.txt`, { token: svc, headers: { range: 'bytes=999999-' } });
    expect(res.headers.get('content-range')).toMatch(/^bytes \*\/\d+$/);
    await expectError(res, 416, {
      statusCode: '416',
      error: 'invalid_range',
      message: 'invalid range provided',
      code: 'InvalidRange',
    });
  });

  it('a missing related resource (copy into a bucket that does not exist)', async () => {
    await expectError(
      await h.api('/object/copy', {
        method: 'POST',
        token: svc,
        ...json({
          bucketId: b,
          sourceKey: 'exists.txt',
          destinationKey: 'x.txt',
          destinationBucket: 'no-such-bucket',
        }),
      }),
      400,
      {
        statusCode: '404',
        error: 'InvalidRequest',
        message: 'The related resource does not exist',
        code: 'InvalidRequest',
      },
    );
    expect((await h.storedKeys()).filter((k) => k.includes('no-such-bucket'))).toEqual([]);
  });

  it('unknown routes and unknown projects are real 404s', async () => {
    await expectError(await h.api('/object', { token: svc }), 404, {
      statusCode: '404',
      error: 'Not Found',
      message: 'Route GET:/object not found',
      code: 'InvalidRequest',
    });
    const res = await fetch(`${h.tp.url}/project/aaaaaaaaaaaaaaaaaaaa/storage/v1/bucket`, {
      headers: { authorization: `Bearer ${svc}` },
    });
    await expectError(res, 404, {
      statusCode: '404',
      error: 'Not Found',
      message: 'Project not found',
      code: 'InvalidRequest',
    });
  });

  it('CORS preflight and exposed headers', async () => {
    const pre = await h.api(`/object/${b}/x.txt`, {
      method: 'OPTIONS',
      headers: { origin: 'http://app.example', 'access-control-request-method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toContain('x-upsert');
    const get = await h.api(`/object/${b}/exists.txt`, {
      token: svc,
      headers: { origin: 'http://app.example' },
    });
    expect(get.headers.get('access-control-expose-headers')).toContain('etag');
  });

  it('ops endpoints', async () => {
    expect((await h.api('/status')).status).toBe(200);
    expect(await (await h.api('/health')).json()).toEqual({ healthy: true });
    const v = await h.api('/version');
    expect(v.status).toBe(200);
    expect((await v.text()).length).toBeGreaterThan(0);
  });
});
