/**
 * Hostile and broken input on resumable uploads: bad Upload-Length and Upload-Metadata, PATCH with
 * a wrong offset or content type, another user's upload id, and a client that disconnects in the
 * middle of a PATCH (the lock is released and the upload continues from its durable offset).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketName, startStorage, uuid, type StorageHarness } from '../support/storage.js';
import { eventually } from '../support/eventually.js';

let h: StorageHarness;
let svc: string;
let b: string;

beforeAll(async () => {
  h = await startStorage('file');
  svc = h.project.serviceRoleKey;
  b = bucketName('tusx');
  await h.service.createBucket(b, { public: false, fileSizeLimit: 1000 });
});
afterAll(async () => h?.close());

const b64 = (s: string) => Buffer.from(s).toString('base64');
const TUS = { 'tus-resumable': '1.0.0' };
const meta = (key: string, bucket = b) => `bucketName ${b64(bucket)},objectName ${b64(key)}`;

async function create(key: string, length: number, token = svc): Promise<string> {
  const res = await h.api('/upload/resumable', {
    method: 'POST',
    token,
    headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': meta(key) },
  });
  expect(res.status).toBe(201);
  return new URL(res.headers.get('location') ?? '').pathname.replace(/^\/storage\/v1/, '');
}

const patch = (
  path: string,
  offset: string,
  body: string,
  token = svc,
  type = 'application/offset+octet-stream',
) =>
  h.api(path, {
    method: 'PATCH',
    token,
    headers: { ...TUS, 'upload-offset': offset, 'content-type': type },
    body,
  });

const offsetOf = async (path: string, token = svc) => {
  const res = await h.api(path, { method: 'HEAD', token, headers: TUS });
  return { status: res.status, offset: res.headers.get('upload-offset') };
};

const objectRows = (key: string) =>
  h.sql('select name from storage.objects where bucket_id = $1 and name = $2', [b, key]);

describe('creation input', () => {
  it('Upload-Length negative, not a number or beyond the bucket limit is refused', async () => {
    for (const [length, status] of [
      ['-1', 400],
      ['abc', 400],
      ['1.5', 400],
      ['1e3', 400],
      // Not a safe integer: @tus/server's (and so the reference's) header validation.
      ['99999999999999999999', 400],
      ['1001', 413],
    ] as const) {
      const res = await h.api('/upload/resumable', {
        method: 'POST',
        token: svc,
        headers: { ...TUS, 'upload-length': length, 'upload-metadata': meta(`len-${uuid()}`) },
      });
      expect({ length, status: res.status }).toEqual({ length, status });
      await res.arrayBuffer();
    }
  });

  it('Upload-Metadata with bad base64, missing names, dot segments or NUL in the key is 400', async () => {
    for (const m of [
      'bucketName !!!notbase64!!!,objectName eA==',
      `bucketName ${b64(b)},objectName`,
      `objectName ${b64('x')}`,
      `bucketName ${b64(b)}`,
      'garbage',
      `bucketName ${b64(b)},objectName ${b64('a/../b')}`,
      `bucketName ${b64(b)},objectName ${b64('a/./b')}`,
      `bucketName ${b64(b)},objectName ${b64('a\u0000b')}`,
      `bucketName ${b64('..')},objectName ${b64('x')}`,
    ]) {
      const res = await h.api('/upload/resumable', {
        method: 'POST',
        token: svc,
        headers: { ...TUS, 'upload-length': '3', 'upload-metadata': m },
      });
      expect({ m, status: res.status }).toEqual({ m, status: 400 });
      await res.arrayBuffer();
    }
  });
});

describe('PATCH input', () => {
  it('a wrong Upload-Offset is 409, a wrong content type 400 (as @tus/server); the upload is unharmed', async () => {
    const key = `offset-${uuid()}.bin`;
    const path = await create(key, 6);
    expect((await patch(path, '0', 'abc')).status).toBe(204);
    for (const offset of ['0', '5', '-1', 'x']) {
      const res = await patch(path, offset, 'zzz');
      expect({ offset, status: res.status }).toEqual({
        offset,
        status: offset === '-1' || offset === 'x' ? 400 : 409,
      });
    }
    expect((await patch(path, '3', 'zzz', svc, 'text/plain')).status).toBe(400);
    expect(await offsetOf(path)).toEqual({ status: 200, offset: '3' });
    expect((await patch(path, '3', 'def')).status).toBe(204);
    const got = await h.api(`/object/authenticated/${b}/${key}`, { token: svc });
    expect(await got.text()).toBe('abcdef');
  });

  it('more bytes than Upload-Length, or a PATCH to an upload that does not exist, is refused', async () => {
    const key = `over-${uuid()}.bin`;
    const path = await create(key, 4);
    const over = await patch(path, '0', 'too long');
    expect(over.status).toBe(413);
    expect(await offsetOf(path)).toEqual({ status: 200, offset: '0' });
    expect((await patch(path, '0', 'fine')).status).toBe(204);
    expect(await objectRows(key)).toHaveLength(1);
    const missing = path.replace(
      /[^/]+$/,
      Buffer.from(`${b}/never-${uuid()}/${uuid()}`).toString('base64url'),
    );
    expect((await patch(missing, '0', 'x')).status).toBe(404);
    expect((await h.api(missing, { method: 'DELETE', token: svc, headers: TUS })).status).toBe(404);
  });

  it("another user's upload: PATCH and DELETE are refused by RLS, the owner continues", async () => {
    const alice = uuid();
    const bob = uuid();
    await h.sql(
      `create policy tusx_own on storage.objects for all to authenticated
         using (bucket_id = '${b}' and (storage.foldername(name))[1] = auth.uid()::text)
         with check (bucket_id = '${b}' and (storage.foldername(name))[1] = auth.uid()::text)`,
    );
    try {
      const aliceToken = await h.userToken(alice);
      const bobToken = await h.userToken(bob);
      const key = `${alice}/mine.txt`;
      const path = await create(key, 4, aliceToken);
      const stolen = await patch(path, '0', 'evil', bobToken);
      expect(stolen.status).toBe(403);
      const del = await h.api(path, { method: 'DELETE', token: bobToken, headers: TUS });
      expect(del.status).toBe(403);
      expect(await offsetOf(path, aliceToken)).toEqual({ status: 200, offset: '0' });
      expect((await patch(path, '0', 'good', aliceToken)).status).toBe(204);
      const got = await h.api(`/object/authenticated/${b}/${key}`, { token: aliceToken });
      expect(await got.text()).toBe('good');
    } finally {
      await h.sql('drop policy tusx_own on storage.objects');
    }
  });

  it('a client that disconnects mid-PATCH: the lock is released, the upload resumes at its offset', async () => {
    const key = `cut-${uuid()}.bin`;
    const path = await create(key, 900);
    const url = new URL(h.base + path);
    // Declares 900 bytes, sends 300, then goes away.
    await new Promise<void>((resolve) => {
      const req = request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'PATCH',
        headers: {
          ...TUS,
          authorization: `Bearer ${svc}`,
          'upload-offset': '0',
          'content-type': 'application/offset+octet-stream',
          'content-length': '900',
        },
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      req.write(Buffer.alloc(300, 1), () => setTimeout(() => req.destroy(), 200));
    });
    let state = await offsetOf(path);
    await eventually(
      async () => {
        state = await offsetOf(path);
        return state.offset === '300';
      },
      { timeoutMs: 2_500 },
    ).catch(() => {});
    expect(state).toEqual({ status: 200, offset: '300' });
    const started = Date.now();
    const rest = await patch(path, '300', Buffer.alloc(600, 2).toString('latin1'));
    expect(rest.status).toBe(204);
    expect(Date.now() - started).toBeLessThan(5000);
    const got = Buffer.from(
      await (await h.api(`/object/authenticated/${b}/${key}`, { token: svc })).arrayBuffer(),
    );
    expect(got.length).toBe(900);
    expect(got.subarray(0, 300).every((x) => x === 1)).toBe(true);
    expect(got.subarray(300).every((x) => x === 2)).toBe(true);
    expect(await objectRows(key)).toHaveLength(1);
    // No advisory lock is left held on this project's database (pg_locks spans the whole server).
    const locks = await h.sql(
      `select count(*)::int as n from pg_locks
       where locktype = 'advisory' and granted
         and database = (select oid from pg_database where datname = current_database())`,
    );
    expect(locks[0]?.n).toBe(0);
  });
});
