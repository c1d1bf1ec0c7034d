/**
 * Storage reconciliation on both backends: versions no committed row references (bytes published
 * by a write whose commit never happened) are removed once older than the grace period, referenced
 * versions never; temporary files and empty folders go (file backend); abandoned resumable uploads
 * expire and are swept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Backends } from '../../src/storage/backend/index.js';
import type { StorageBackend } from '../../src/storage/backend/interface.js';
import { reconcileProject } from '../../src/storage/reconcile.js';
import { TusServers } from '../../src/storage/tus/routes.js';
import { bucketName, startStorage, type StorageHarness } from '../support/storage.js';

describe.each(['file', 's3'] as const)('reconciliation (%s backend)', (kind) => {
  let h: StorageHarness;
  let backends: Backends;
  let backend: StorageBackend;
  let b: string;

  beforeAll(async () => {
    h = await startStorage(kind, { storageSweepIntervalMs: 0, storageTusExpiryMs: 500 });
    backends = await Backends.load(h.tp.config);
    backend = backends.for(h.project);
    b = bucketName('rec');
    await h.service.createBucket(b, { public: false });
  });
  afterAll(async () => {
    backends?.close();
    await h?.close();
  });

  const put = (key: string, version = randomUUID()) =>
    backend.put({ bucket: b, key, version }, Readable.from([Buffer.from('orphan bytes')]), {
      contentType: 'text/plain',
      cacheControl: 'no-cache',
      maxBytes: 1024,
      limitError: () => new Error('too large'),
    });

  it('removes unreferenced versions past the grace period, keeps referenced ones and fresh ones', async () => {
    expect((await h.service.from(b).upload('kept/a.txt', 'kept bytes')).error).toBeNull();
    await put('orphan/deep/x.txt');
    await put('kept/a.txt'); // a second version of a live key, never committed
    const before = (await h.storedKeys()).filter((k) => k.includes(`${b}/`));
    expect(before).toHaveLength(3);

    // Within the grace period nothing goes (an upload between its bytes and its commit).
    const fresh = await reconcileProject(h.project, backend, 3_600_000);
    expect(fresh.orphans).toBe(0);
    expect((await h.storedKeys()).filter((k) => k.includes(`${b}/`))).toHaveLength(3);

    const swept = await reconcileProject(h.project, backend, 0, Date.now() + 5_000);
    expect(swept.orphans).toBe(2);
    const after = (await h.storedKeys()).filter((k) => k.includes(`${b}/`));
    const rows = await h.sql<{ version: string }>(
      'select version from storage.objects where bucket_id = $1 and name = $2',
      [b, 'kept/a.txt'],
    );
    expect(after).toHaveLength(1);
    expect(after[0]).toContain(rows[0]?.version);
    const { data } = await h.service.from(b).download('kept/a.txt');
    expect(await data?.text()).toBe('kept bytes');
  });

  // The local-disk leftovers (temporary files, folders, tus files) exist on the file backend only.
  if (kind === 'file') {
    it('removes stale temporary files and empty folders (file backend)', async () => {
      const root = join(h.project.filesDir, 'storage');
      mkdirSync(join(root, '.tmp'), { recursive: true });
      const stale = join(root, '.tmp', randomUUID());
      writeFileSync(stale, 'half an upload');
      const old = new Date(Date.now() - 3_600_000);
      utimesSync(stale, old, old);
      mkdirSync(join(root, 'buckets', b, 'empty', 'deeper'), { recursive: true });
      mkdirSync(join(root, 'buckets', 'deleted-bucket', 'x'), { recursive: true });
      const r = await reconcileProject(h.project, backend, 60_000);
      expect(r.tempFiles).toBe(1);
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(join(root, 'buckets', b, 'empty'))).toBe(false);
      expect(existsSync(join(root, 'buckets', 'deleted-bucket'))).toBe(false);
      expect(existsSync(join(root, 'buckets', b, 'kept'))).toBe(true);
    });

    it('abandoned resumable uploads expire (410) and are swept', async () => {
      const meta = `bucketName ${Buffer.from(b).toString('base64')},objectName ${Buffer.from('tus/abandoned.bin').toString('base64')}`;
      const created = await h.api('/upload/resumable', {
        method: 'POST',
        token: h.project.serviceRoleKey,
        headers: { 'tus-resumable': '1.0.0', 'upload-length': '100', 'upload-metadata': meta },
      });
      expect(created.status).toBe(201);
      const dir = join(h.project.filesDir, 'storage', '.tus');
      expect(readdirSync(dir)).toHaveLength(2);
      await new Promise((r) => setTimeout(r, 700));
      const path = new URL(created.headers.get('location') ?? '').pathname.replace(/^\/storage\/v1/, '');
      const patch = await h.api(path, {
        method: 'PATCH',
        token: h.project.serviceRoleKey,
        headers: {
          'tus-resumable': '1.0.0',
          'upload-offset': '0',
          'content-type': 'application/offset+octet-stream',
        },
        body: 'x',
      });
      expect(patch.status).toBe(410);
      const tus = new TusServers({ platform: h.tp.platform, backends });
      expect(await tus.sweep(h.project, Date.now() - 60_000)).toBe(1);
      await tus.close();
      expect(readdirSync(dir)).toEqual([]);
    });
  }
});
