/**
 * Keys with empty segments (`a//b`, `/a`, `a/`) are keys of their own, as the reference accepts
 * them, on REST, TUS and S3 and on both backends: each keeps its own bytes and lists under its exact
 * name, and none lands on another key's file. `.` and `..` segments stay refused everywhere.
 */
import { s3ClientWithNewKey } from './s3-support.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { bucketName, startStorage, type BackendKind, type StorageHarness } from '../support/storage.js';
import { runUpload, statusOf } from './tus-support.js';
import { s3Error } from './s3-support.js';
import { FileBackend } from '../../src/storage/backend/file.js';
import { Backends } from '../../src/storage/backend/index.js';
import { reconcileProject } from '../../src/storage/reconcile.js';

/** A POST with the path sent verbatim (fetch would normalise dot segments). */
function rawUpload(h: StorageHarness, path: string, token: string, body: string): Promise<number> {
  const url = new URL(h.base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: `${url.pathname}${path}`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe.each(['file', 's3'] as BackendKind[])('empty key segments on the %s backend', (kind) => {
  let h: StorageHarness;
  let b: string;
  let s3: S3Client;
  const svc = () => h.project.serviceRoleKey;
  const download = async (key: string, token = svc()) => {
    const res = await h.api(
      `/object/authenticated/${b}/${key.split('/').map(encodeURIComponent).join('/')}`,
      {
        token,
      },
    );
    return { status: res.status, text: await res.text() };
  };

  beforeAll(async () => {
    h = await startStorage(kind);
    b = bucketName('seg');
    expect((await h.service.createBucket(b)).error).toBeNull();
    s3 = await s3ClientWithNewKey(h, 'segments');
  });
  afterAll(async () => {
    s3?.destroy();
    await h?.close();
  });

  it('REST: a/child, a//child, a///child, /a and a/ are five objects, each with its own bytes, listed exactly', async () => {
    const keys = ['a/child.txt', 'a//child.txt', 'a///child.txt', '/a', 'a/'];
    // Raw requests: storage-js collapses repeated slashes before sending.
    for (const key of keys) expect(await rawUpload(h, `/object/${b}/${key}`, svc(), key), key).toBe(200);
    for (const key of keys) expect(await download(key), key).toEqual({ status: 200, text: key });
    const listed = await h.api(`/object/list-v2/${b}`, {
      method: 'POST',
      token: svc(),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prefix: '', limit: 100, with_delimiter: false }),
    });
    const names = ((await listed.json()) as { objects: { name: string }[] }).objects.map((o) => o.name);
    expect(names).toEqual(expect.arrayContaining(keys));
    // Deleting one leaves the others.
    const del = await h.api(`/object/${b}/a//child.txt`, { method: 'DELETE', token: svc() });
    expect(del.status).toBe(200);
    expect((await download('a//child.txt')).status).toBe(400);
    expect(await download('a/child.txt')).toEqual({ status: 200, text: 'a/child.txt' });
    expect(await download('a///child.txt')).toEqual({ status: 200, text: 'a///child.txt' });
  });

  it('S3 and TUS accept the same keys and keep them apart from the slash-collapsed one', async () => {
    await s3.send(new PutObjectCommand({ Bucket: b, Key: 's3/x', Body: 'single' }));
    await s3.send(new PutObjectCommand({ Bucket: b, Key: 's3//x', Body: 'double' }));
    const get = async (Key: string) =>
      (await s3.send(new GetObjectCommand({ Bucket: b, Key }))).Body!.transformToString();
    expect([await get('s3/x'), await get('s3//x')]).toEqual(['single', 'double']);
    const out = await runUpload(Buffer.from('resumable'), {
      endpoint: `${h.base}/upload/resumable`,
      headers: { authorization: `Bearer ${svc()}` },
      metadata: { bucketName: b, objectName: 's3///x', contentType: 'text/plain' },
    });
    expect(out.error).toBeUndefined();
    expect(await get('s3///x')).toBe('resumable');
    expect(await get('s3/x')).toBe('single');
  });

  it('attacker: an insert-only user cannot overwrite a file by doubling its slashes, nor escape with dot segments', async () => {
    await h.sql(
      `create policy "seg insert ${kind}" on storage.objects for insert to authenticated with check (bucket_id = $$${b}$$)`,
    );
    await h.sql(
      `create policy "seg select ${kind}" on storage.objects for select to authenticated using (bucket_id = $$${b}$$)`,
    );
    expect((await h.service.from(b).upload('shared/doc.txt', 'original')).error).toBeNull();
    const attacker = await h.userToken('00000000-0000-4000-8000-00000000a77a');
    // Its own object (a new row the policy allows); the pinned file keeps its bytes.
    expect(await rawUpload(h, `/object/${b}/shared//doc.txt`, attacker, 'attacker')).toBe(200);
    expect(await rawUpload(h, `/object/${b}//shared/doc.txt`, attacker, 'attacker')).toBe(200);
    expect(await rawUpload(h, `/object/${b}/shared/doc.txt`, attacker, 'attacker')).toBe(400);
    expect(await download('shared/doc.txt', attacker)).toEqual({ status: 200, text: 'original' });
    expect(await download('shared//doc.txt', attacker)).toEqual({ status: 200, text: 'attacker' });
    // Dot segments mixed with empty ones: refused on REST, TUS and S3; nothing stored.
    const other = bucketName('victim');
    expect((await h.service.createBucket(other)).error).toBeNull();
    expect((await h.service.from(other).upload('x.txt', 'victim')).error).toBeNull();
    for (const key of [`a//../../${other}/x.txt`, `//../${other}/x.txt`, `..//${other}/x.txt`, 'a/.//b']) {
      expect(await rawUpload(h, `/object/${b}/${key}`, attacker, 'escape'), key).toBe(400);
      const tus = await runUpload(Buffer.from('escape'), {
        endpoint: `${h.base}/upload/resumable`,
        headers: { authorization: `Bearer ${attacker}` },
        metadata: { bucketName: b, objectName: key, contentType: 'text/plain' },
      });
      expect(statusOf(tus), key).toBe(400);
      const e = await s3Error(s3.send(new PutObjectCommand({ Bucket: b, Key: key, Body: 'escape' })));
      expect(e.name, key).toBe('InvalidKey');
    }
    expect(await await (await h.service.from(other).download('x.txt')).data!.text()).toBe('victim');
    const stored = await h.storedKeys();
    expect(stored.some((k) => k.split(/[\\/]/).includes('..'))).toBe(false);
  });

  it('reconciliation reads the stored names back to the same keys: no live object is swept as an orphan', async () => {
    for (const key of ['keep//x.txt', '/keep/x.txt', 'keep/x.txt/'])
      expect(await rawUpload(h, `/object/${b}/${key}`, svc(), key), key).toBe(200);
    const backends = await Backends.load(h.tp.config);
    try {
      const swept = await reconcileProject(h.project, backends.for(h.project), 0, Date.now() + 5_000);
      expect(swept.orphans).toBe(0);
    } finally {
      backends.close();
    }
    for (const key of ['keep//x.txt', '/keep/x.txt', 'keep/x.txt/'])
      expect(await download(key), key).toEqual({ status: 200, text: key });
  });
});

describe('the file backend', () => {
  it('the file backend spells empty segments apart and keeps them inside the bucket', () => {
    const fb = new FileBackend('/tmp/strata-root');
    const v = '00000000-0000-0000-0000-000000000000';
    const at = (key: string) => fb.pathOf({ bucket: 'bk', key, version: v });
    const paths = ['a/b', 'a//b', '/a/b', 'a/b/', 'a///b'].map(at);
    expect(new Set(paths).size).toBe(5);
    expect(at('a//b')).toBe(`/tmp/strata-root/buckets/bk/a/%/b/~${v}`);
    for (const p of paths) expect(p.startsWith('/tmp/strata-root/buckets/bk/')).toBe(true);
  });
});
