/**
 * A resumable upload whose lock another holder keeps (another node that does not let go, here a
 * session holding the same PostgreSQL advisory lock): the request waits
 * STRATA_STORAGE_TUS_LOCK_TIMEOUT_MS and is answered 503 "acquiring lock timeout", the reference's
 * LockTimeout (tus clients retry it), not @tus/server's 500. Once the holder lets go, the same
 * PATCH succeeds.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketName, startStorage, type StorageHarness } from '../support/storage.js';

let h: StorageHarness;
let b: string;

beforeAll(async () => {
  h = await startStorage('file', { storageTusLockTimeoutMs: 800 });
  b = bucketName('tuslock');
  await h.service.createBucket(b, { public: false });
});
afterAll(async () => h?.close());

const b64 = (s: string) => Buffer.from(s).toString('base64');
const TUS = { 'tus-resumable': '1.0.0' };

describe('a lock held elsewhere', () => {
  it('is a 503 LockTimeout after the configured wait; the PATCH succeeds once it is let go', async () => {
    const svc = h.project.serviceRoleKey;
    const created = await h.api('/upload/resumable', {
      method: 'POST',
      token: svc,
      headers: {
        ...TUS,
        'upload-length': '5',
        'upload-metadata': `bucketName ${b64(b)},objectName ${b64('a.txt')}`,
      },
    });
    expect(created.status).toBe(201);
    const path = new URL(created.headers.get('location') ?? '').pathname.replace(/^\/storage\/v1/, '');
    const id = Buffer.from(path.split('/').pop() ?? '', 'base64url').toString('utf8');
    const patch = () =>
      h.api(path, {
        method: 'PATCH',
        token: svc,
        headers: { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
        body: 'hello',
      });

    const holder = new pg.Client({ connectionString: h.project.superuserUrl });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock(hashtextextended($1, 0))', [`storage.tus:${id}`]);
      const refused = await patch();
      expect(refused.status).toBe(503);
      expect(await refused.text()).toBe('acquiring lock timeout');
      await holder.query('select pg_advisory_unlock(hashtextextended($1, 0))', [`storage.tus:${id}`]);
    } finally {
      await holder.end();
    }
    const done = await patch();
    expect(done.status).toBe(204);
    expect(done.headers.get('upload-offset')).toBe('5');
    const rows = await h.sql('select name from storage.objects where bucket_id = $1', [b]);
    expect(rows).toEqual([{ name: 'a.txt' }]);
  });
});
