/** Object operations through storage-js, run against each backend (see objects-*.test.ts). */
import { describe, expect, it } from 'vitest';
import { bucketName, type StorageHarness } from '../support/storage.js';

export function objectSuite(get: () => StorageHarness): void {
  const setup = async (opts: { public?: boolean } = {}) => {
    const h = get();
    const b = bucketName();
    const r = await h.service.createBucket(b, { public: opts.public ?? false });
    expect(r.error).toBeNull();
    return { h, b, files: h.service.from(b) };
  };

  describe('upload and download', () => {
    it('uploads a string raw and downloads it with its headers', async () => {
      const { h, b, files } = await setup();
      const up = await files.upload('docs/a.txt', 'hello world', {
        contentType: 'text/plain',
        cacheControl: '60',
      });
      expect(up.error).toBeNull();
      expect(up.data).toMatchObject({ path: 'docs/a.txt', fullPath: `${b}/docs/a.txt` });
      expect(up.data!.id).toMatch(/^[0-9a-f-]{36}$/);
      const d = await files.download('docs/a.txt');
      expect(await d.data!.text()).toBe('hello world');
      const res = await h.api(`/object/${b}/docs/a.txt`, { token: h.project.serviceRoleKey });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain');
      expect(res.headers.get('cache-control')).toBe('max-age=60');
      expect(res.headers.get('etag')).toBe('"5eb63bbbe01eeed093cb22bb8f5acdc3"');
      expect(res.headers.get('content-length')).toBe('11');
      expect(res.headers.get('accept-ranges')).toBe('bytes');
      expect(res.headers.get('x-robots-tag')).toBe('none');
      expect(new Date(res.headers.get('last-modified')!).getTime()).toBeGreaterThan(Date.now() - 60_000);
    });

    it('uploads Blobs, Buffers, ArrayBuffers, FormData and streams', async () => {
      const { files } = await setup();
      const blob = new Blob([new Uint8Array([1, 2, 3])], { type: 'image/png' });
      expect((await files.upload('blob.png', blob, { metadata: { dept: 'eng' } })).error).toBeNull();
      expect(
        (await files.upload('buf.bin', Buffer.from('buf'), { contentType: 'application/octet-stream' }))
          .error,
      ).toBeNull();
      expect((await files.upload('ab.bin', new TextEncoder().encode('ab').buffer)).error).toBeNull();
      const form = new FormData();
      form.append('', new Blob(['form body'], { type: 'text/markdown' }), 'x.md');
      expect((await files.upload('form.md', form)).error).toBeNull();
      const { Readable } = await import('node:stream');
      expect(
        (await files.upload('stream.txt', Readable.from([Buffer.from('str'), Buffer.from('eam')]) as never))
          .error,
      ).toBeNull();
      const info = await files.info('blob.png');
      expect(info.data).toMatchObject({
        name: 'blob.png',
        size: 3,
        contentType: 'image/png',
        cacheControl: 'max-age=3600',
        metadata: { dept: 'eng' },
      });
      expect((await files.info('form.md')).data).toMatchObject({ contentType: 'text/markdown', size: 9 });
      expect(await (await files.download('stream.txt')).data!.text()).toBe('stream');
      expect(await (await files.download('ab.bin')).data!.text()).toBe('ab');
    });

    it('refuses to overwrite without upsert, overwrites with x-upsert and with update()', async () => {
      const { h, b, files } = await setup();
      await files.upload('k.txt', 'one');
      const again = await files.upload('k.txt', 'two');
      expect(again.error).toMatchObject({ statusCode: '409', message: 'The resource already exists' });
      const first = await files.info('k.txt');
      expect((await files.upload('k.txt', 'three', { upsert: true })).error).toBeNull();
      expect(await (await files.download('k.txt')).data!.text()).toBe('three');
      expect((await files.update('k.txt', 'four')).error).toBeNull();
      expect(await (await files.download('k.txt')).data!.text()).toBe('four');
      expect((await files.info('k.txt')).data!.id).toBe(first.data!.id);
      expect((await files.update('created-by-put.txt', 'new')).error).toBeNull();
      // Old versions' bytes are gone: one stored version per object.
      const keys = (await h.storedKeys()).filter((k) => k.includes(`${b}/`));
      expect(keys).toHaveLength(2);
    });

    it('stores x-metadata user metadata and serves text/html as text/plain', async () => {
      const { h, b, files } = await setup();
      const res = await h.api(`/object/${b}/page.html`, {
        method: 'POST',
        token: h.project.serviceRoleKey,
        headers: { 'content-type': 'text/html', 'x-metadata': Buffer.from('{"a":1}').toString('base64') },
        body: '<b>hi</b>',
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ Key: `${b}/page.html` });
      const get = await h.api(`/object/authenticated/${b}/page.html`, { token: h.project.serviceRoleKey });
      expect(get.headers.get('content-type')).toBe('text/plain');
      expect(get.headers.get('cache-control')).toBe('no-cache');
      expect((await files.info('page.html')).data!.metadata).toEqual({ a: 1 });
    });

    it('accepts JSON bodies as opaque bytes', async () => {
      const { h, b } = await setup();
      const res = await h.api(`/object/${b}/data.json`, {
        method: 'POST',
        token: h.project.serviceRoleKey,
        headers: { 'content-type': 'application/json' },
        body: '{"not":"parsed"',
      });
      expect(res.status).toBe(200);
      const get = await h.api(`/object/${b}/data.json`, { token: h.project.serviceRoleKey });
      expect(await get.text()).toBe('{"not":"parsed"');
    });

    it('serves ranges, 304 on If-None-Match / If-Modified-Since, and download disposition', async () => {
      const { h, b, files } = await setup({ public: true });
      await files.upload('r.txt', '0123456789');
      const path = `/object/public/${b}/r.txt`;
      const r1 = await h.api(path, { headers: { range: 'bytes=2-5' } });
      expect(r1.status).toBe(206);
      expect(r1.headers.get('content-range')).toBe('bytes 2-5/10');
      expect(await r1.text()).toBe('2345');
      const r2 = await h.api(path, { headers: { range: 'bytes=-3' } });
      expect(await r2.text()).toBe('789');
      const r3 = await h.api(path, { headers: { range: 'bytes=7-100' } });
      expect(r3.headers.get('content-range')).toBe('bytes 7-9/10');
      const bad = await h.api(path, { headers: { range: 'bytes=20-30' } });
      expect(bad.status).toBe(416);
      expect(await bad.json()).toEqual({
        statusCode: '416',
        error: 'invalid_range',
        message: 'invalid range provided',
        code: 'InvalidRange',
      });
      const full = await h.api(path);
      const etag = full.headers.get('etag')!;
      expect((await h.api(path, { headers: { 'if-none-match': etag } })).status).toBe(304);
      expect((await h.api(path, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
      expect(
        (await h.api(path, { headers: { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() } }))
          .status,
      ).toBe(304);
      const dl = await h.api(`${path}?download=my%20file.txt`);
      expect(dl.headers.get('content-disposition')).toBe(
        `attachment; filename=my%20file.txt; filename*=UTF-8''my%20file.txt`,
      );
      expect((await h.api(`${path}?download`)).headers.get('content-disposition')).toBe('attachment;');
      const pub = files.getPublicUrl('r.txt', { download: true });
      const viaUrl = await fetch(pub.data.publicUrl);
      expect(viaUrl.status).toBe(200);
      expect(viaUrl.headers.get('content-disposition')).toBe('attachment;');
    });

    it('answers HEAD from the row and info/exists through the aliases', async () => {
      const { h, b, files } = await setup();
      await files.upload('i/x.txt', 'abc', { contentType: 'text/plain' });
      expect((await files.exists('i/x.txt')).data).toBe(true);
      expect((await files.exists('i/nope.txt')).data).toBe(false);
      const head = await h.api(`/object/authenticated/${b}/i/x.txt`, {
        method: 'HEAD',
        token: h.project.serviceRoleKey,
      });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe('3');
      const info = await files.info('i/x.txt');
      expect(info.data).toMatchObject({
        name: 'i/x.txt',
        bucketId: b,
        size: 3,
        contentType: 'text/plain',
        etag: expect.stringMatching(/^"/),
        metadata: {},
      });
      const auth = await h.api(`/object/info/authenticated/${b}/i/x.txt`, {
        token: h.project.serviceRoleKey,
      });
      expect(await auth.json()).toMatchObject({
        name: 'i/x.txt',
        bucket_id: b,
        size: 3,
        last_modified: expect.any(String),
        created_at: expect.any(String),
      });
      expect((await h.api(`/object/info/public/${b}/i/x.txt`)).status).toBe(400);
    });
  });

  describe('delete, move, copy, list', () => {
    it('removes one and many objects', async () => {
      const { h, b, files } = await setup();
      for (const k of ['a.txt', 'b.txt', 'c/d.txt']) await files.upload(k, k);
      const one = await h.api(`/object/${b}/a.txt`, { method: 'DELETE', token: h.project.serviceRoleKey });
      expect(await one.json()).toEqual({ message: 'Successfully deleted' });
      const many = await files.remove(['b.txt', 'c/d.txt', 'missing.txt']);
      expect(many.data!.map((r) => r.name).sort()).toEqual(['b.txt', 'c/d.txt']);
      expect(many.data![0]).toMatchObject({
        bucket_id: b,
        id: expect.any(String),
        metadata: expect.any(Object),
      });
      expect((await h.storedKeys()).filter((k) => k.includes(`${b}/`))).toEqual([]);
      expect((await h.service.from('no-such-bucket').remove(['x'])).data).toEqual([]);
    });

    it('moves within and across buckets keeping the id', async () => {
      const { h, b, files } = await setup();
      const other = bucketName('other');
      await h.service.createBucket(other);
      await files.upload('m/a.txt', 'move me', { metadata: { k: 'v' } });
      const id = (await files.info('m/a.txt')).data!.id;
      expect((await files.move('m/a.txt', 'n/b.txt')).data).toEqual({ message: 'Successfully moved' });
      expect((await files.exists('m/a.txt')).data).toBe(false);
      expect(await (await files.download('n/b.txt')).data!.text()).toBe('move me');
      expect((await files.move('n/b.txt', 'c.txt', { destinationBucket: other })).error).toBeNull();
      const moved = await h.service.from(other).info('c.txt');
      expect(moved.data).toMatchObject({ id, metadata: { k: 'v' } });
      expect(await (await h.service.from(other).download('c.txt')).data!.text()).toBe('move me');
      const keys = (await h.storedKeys()).filter((k) => k.includes(`${b}/`) || k.includes(`${other}/`));
      expect(keys).toHaveLength(1);
      await files.upload('taken.txt', 'x');
      await h.service.from(other).upload('c2.txt', 'y');
      const clash = await h.service.from(other).move('c2.txt', 'c.txt');
      expect(clash.error).toMatchObject({ statusCode: '409' });
    });

    it('copies within and across buckets, with and without metadata', async () => {
      const { h, b, files } = await setup();
      const other = bucketName('other');
      await h.service.createBucket(other);
      await files.upload('src.txt', 'copy me', { contentType: 'text/plain', metadata: { a: 1 } });
      expect((await files.copy('src.txt', 'dst.txt')).data).toEqual({ path: `${b}/dst.txt` });
      const odd = "sp ace/(x)&y=z;1+2,@'!.txt";
      expect((await files.upload(odd, 'odd key')).error).toBeNull();
      expect((await files.copy(odd, `${odd}.copy`)).error).toBeNull();
      expect(await (await files.download(`${odd}.copy`)).data!.text()).toBe('odd key');
      expect(await (await files.download('dst.txt')).data!.text()).toBe('copy me');
      expect((await files.info('dst.txt')).data).toMatchObject({
        contentType: 'text/plain',
        metadata: { a: 1 },
      });
      expect((await files.copy('src.txt', 'x/y.txt', { destinationBucket: other })).data).toEqual({
        path: `${other}/x/y.txt`,
      });
      expect(await (await h.service.from(other).download('x/y.txt')).data!.text()).toBe('copy me');
      const again = await files.copy('src.txt', 'dst.txt');
      expect(again.error).toMatchObject({ statusCode: '409' });
      const res = await h.api('/object/copy', {
        method: 'POST',
        token: h.project.serviceRoleKey,
        headers: {
          'content-type': 'application/json',
          'x-upsert': 'true',
          'x-metadata': Buffer.from('{"b":2}').toString('base64'),
        },
        body: JSON.stringify({
          bucketId: b,
          sourceKey: 'src.txt',
          destinationKey: 'src.txt',
          copyMetadata: false,
          metadata: { cacheControl: 'max-age=5', mimetype: 'text/csv' },
        }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        Key: `${b}/src.txt`,
        name: 'src.txt',
        bucket_id: b,
        user_metadata: { b: 2 },
      });
      expect((await files.info('src.txt')).data).toMatchObject({
        contentType: 'text/csv',
        cacheControl: 'max-age=5',
        metadata: { b: 2 },
      });
      expect(await (await files.download('src.txt')).data!.text()).toBe('copy me');
    });

    it('lists one level with folders, limit/offset, sortBy and search', async () => {
      const { files } = await setup();
      for (const k of ['a.txt', 'folder/b.txt', 'folder/sub/c.txt', 'Folder2/x.txt', 'zeta.txt'])
        await files.upload(k, k);
      const root = await files.list();
      expect(root.data!.map((e) => [e.name, e.id === null])).toEqual([
        ['a.txt', false],
        ['folder', true],
        ['Folder2', true],
        ['zeta.txt', false],
      ]);
      const folder = root.data!.find((e) => e.name === 'folder')!;
      expect(folder).toMatchObject({
        id: null,
        updated_at: null,
        created_at: null,
        last_accessed_at: null,
        metadata: null,
      });
      const file = root.data!.find((e) => e.name === 'a.txt')!;
      expect(file.metadata).toMatchObject({
        size: 5,
        mimetype: 'text/plain;charset=UTF-8',
        eTag: expect.any(String),
      });
      expect((await files.list('folder')).data!.map((e) => e.name)).toEqual(['b.txt', 'sub']);
      expect((await files.list('folder/')).data!.map((e) => e.name)).toEqual(['b.txt', 'sub']);
      expect((await files.list('', { search: 'fo' })).data!.map((e) => e.name)).toEqual([
        'folder',
        'Folder2',
      ]);
      expect((await files.list('', { limit: 2, offset: 1 })).data!.map((e) => e.name)).toEqual([
        'folder',
        'Folder2',
      ]);
      expect(
        (await files.list('', { sortBy: { column: 'name', order: 'desc' } })).data!.map((e) => e.name),
      ).toEqual(['zeta.txt', 'Folder2', 'folder', 'a.txt']);
      expect(
        (await files.list('', { sortBy: { column: 'created_at', order: 'desc' } })).data!.map((e) => e.name),
      ).toEqual(['folder', 'Folder2', 'zeta.txt', 'a.txt']);
      expect((await get().service.from('missing-bucket').list()).data).toEqual([]);
    });

    it('lists with listV2: full keys, folders with a delimiter, cursor pagination', async () => {
      const { files } = await setup();
      for (const k of ['a.txt', 'd/1.txt', 'd/2.txt', 'd/sub/3.txt', 'e/4.txt', 'f.txt'])
        await files.upload(k, k);
      const flat = await files.listV2({ prefix: 'd/' });
      expect(flat.data).toMatchObject({ hasNext: false, folders: [] });
      expect(flat.data!.objects.map((o) => o.name)).toEqual(['d/1.txt', 'd/2.txt', 'd/sub/3.txt']);
      const grouped = await files.listV2({ with_delimiter: true });
      expect(grouped.data!.folders.map((f) => f.name)).toEqual(['d/', 'e/']);
      expect(grouped.data!.objects.map((o) => o.name)).toEqual(['a.txt', 'f.txt']);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 10; i++) {
        const page = await files.listV2({
          limit: 2,
          cursor,
          with_delimiter: true,
          sortBy: { column: 'name', order: 'desc' },
        });
        seen.push(...page.data!.folders.map((f) => f.name), ...page.data!.objects.map((o) => o.name));
        if (!page.data!.hasNext) break;
        cursor = page.data!.nextCursor;
      }
      expect(seen.sort()).toEqual(['a.txt', 'd/', 'e/', 'f.txt']);
      const byTime: string[] = [];
      cursor = undefined;
      for (let i = 0; i < 10; i++) {
        const page = await files.listV2({ limit: 2, cursor, sortBy: { column: 'created_at', order: 'asc' } });
        byTime.push(...page.data!.objects.map((o) => o.name));
        if (!page.data!.hasNext) break;
        cursor = page.data!.nextCursor;
      }
      expect(byTime).toEqual(['a.txt', 'd/1.txt', 'd/2.txt', 'd/sub/3.txt', 'e/4.txt', 'f.txt']);
    });
  });
}
