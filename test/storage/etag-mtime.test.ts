/**
 * The file backend's opt-in `mtime` ETag (STRATA_STORAGE_ETAG_ALGORITHM=mtime, the reference's
 * FILE_STORAGE_ETAG_ALGORITHM): `"<mtime ms hex>-<size hex>"`, with no hashing, for plain uploads,
 * copies and completed resumable uploads; conditional downloads work with it as with MD5. The
 * default stays MD5 (every other storage test).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromEnv } from '../../src/config.js';
import { bucketName, startStorage, type StorageHarness } from '../support/storage.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const mtimeETag = (size: number) => new RegExp(`^"[0-9a-f]+(\\.[0-9a-f]+)?-${size.toString(16)}"$`);

describe('mtime ETag (file backend)', () => {
  let h: StorageHarness;
  let b: string;

  beforeAll(async () => {
    h = await startStorage('file', { storageEtagAlgorithm: 'mtime' });
    b = bucketName('etag');
    expect((await h.service.createBucket(b, { public: false })).error).toBeNull();
  });
  afterAll(async () => h?.close());

  const info = async (key: string) => {
    const res = await h.api(`/object/info/${b}/${key}`, { token: h.project.serviceRoleKey });
    expect(res.status).toBe(200);
    return (await res.json()) as { etag: string; size: number };
  };

  it('uploads get "<mtime>-<size>"; downloads send it and answer If-None-Match with 304', async () => {
    const body = 'x'.repeat(300);
    expect((await h.service.from(b).upload('a.txt', body, { contentType: 'text/plain' })).error).toBeNull();
    const i = await info('a.txt');
    expect(i.size).toBe(300);
    expect(i.etag).toMatch(mtimeETag(300));
    const res = await h.api(`/object/${b}/a.txt`, { token: h.project.serviceRoleKey });
    expect(res.headers.get('etag')).toBe(i.etag);
    expect(await res.text()).toBe(body);
    const again = await h.api(`/object/${b}/a.txt`, {
      token: h.project.serviceRoleKey,
      headers: { 'if-none-match': i.etag },
    });
    expect(again.status).toBe(304);
  });

  it('a copy gets its own mtime ETag of the same size', async () => {
    expect(
      (await h.service.from(b).upload('src.bin', 'copy me', { contentType: 'text/plain' })).error,
    ).toBeNull();
    expect((await h.service.from(b).copy('src.bin', 'dst.bin')).error).toBeNull();
    expect((await info('dst.bin')).etag).toMatch(mtimeETag(7));
  });

  it('a completed resumable upload gets an mtime ETag; the bucket size limit still applies', async () => {
    const meta = `bucketName ${b64(b)},objectName ${b64('tus/one.txt')},contentType ${b64('text/plain')}`;
    const created = await h.api('/upload/resumable', {
      token: h.project.serviceRoleKey,
      method: 'POST',
      headers: {
        'tus-resumable': '1.0.0',
        'upload-length': '10',
        'upload-metadata': meta,
        'content-type': 'application/offset+octet-stream',
      },
      body: '0123456789',
    });
    expect(created.status).toBe(201);
    expect((await info('tus/one.txt')).etag).toMatch(mtimeETag(10));
    const small = bucketName('etag-small');
    expect((await h.service.createBucket(small, { public: false, fileSizeLimit: 5 })).error).toBeNull();
    const tooBig = await h.service.from(small).upload('big.txt', '0123456789', { contentType: 'text/plain' });
    expect(tooBig.error).not.toBeNull();
  });

  it('the setting accepts md5 (default) and mtime only', () => {
    expect(configFromEnv({}).storageEtagAlgorithm).toBe('md5');
    expect(configFromEnv({ STRATA_STORAGE_ETAG_ALGORITHM: 'mtime' }).storageEtagAlgorithm).toBe('mtime');
    expect(() => configFromEnv({ STRATA_STORAGE_ETAG_ALGORITHM: 'sha1' })).toThrow(
      /STRATA_STORAGE_ETAG_ALGORITHM must be "md5" or "mtime"/,
    );
  });
});
