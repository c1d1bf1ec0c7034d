/** Signed URLs, limits, concurrency, aborted uploads and a large streamed object, per backend. */
import { describe, expect, it } from 'vitest';
import { readdirSync, readlinkSync } from 'node:fs';
import { request } from 'node:http';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { bucketName, type StorageHarness } from '../support/storage.js';
import { eventually } from '../support/eventually.js';

/** `size` deterministic pseudo-random bytes, produced lazily in 1 MiB chunks. */
function bytes(size: number, seed = 1): Readable {
  let sent = 0;
  let n = seed;
  return new Readable({
    read() {
      if (sent >= size) return this.push(null);
      const len = Math.min(1024 * 1024, size - sent);
      const buf = Buffer.allocUnsafe(len);
      for (let i = 0; i < len; i += 4) {
        n = (n * 1103515245 + 12345) >>> 0;
        buf.writeUInt32LE(n, i);
      }
      sent += len;
      this.push(buf);
    },
  });
}

async function md5Of(stream: AsyncIterable<Uint8Array>): Promise<{ md5: string; size: number }> {
  const h = createHash('md5');
  let size = 0;
  for await (const c of stream) {
    h.update(c);
    size += c.length;
  }
  return { md5: h.digest('hex'), size };
}

export function streamingSuite(get: () => StorageHarness): void {
  const setup = async (
    opts: Parameters<StorageHarness['service']['createBucket']>[1] = { public: false },
  ) => {
    const h = get();
    const b = bucketName();
    expect((await h.service.createBucket(b, opts)).error).toBeNull();
    return { h, b, files: h.service.from(b) };
  };
  const storedIn = async (h: StorageHarness, b: string) =>
    (await h.storedKeys()).filter((k) => k.includes(`${b}/`) || k.startsWith('.tmp/'));

  describe('signed URLs', () => {
    it('creates one and many signed download URLs and downloads through them', async () => {
      const { h, b, files } = await setup();
      await files.upload('s/one.txt', 'signed bytes');
      const one = await files.createSignedUrl('s/one.txt', 60, { download: 'x.txt' });
      expect(one.error).toBeNull();
      const res = await fetch(one.data!.signedUrl);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('signed bytes');
      expect(res.headers.get('cache-control')).toBeNull();
      expect(new Date(res.headers.get('expires')!).getTime()).toBeGreaterThan(Date.now());
      expect(res.headers.get('content-disposition')).toContain('filename=x.txt');
      const raw = await h.api(`/object/sign/${b}/s/one.txt`, {
        method: 'POST',
        token: h.project.serviceRoleKey,
        headers: { 'content-type': 'application/json' },
        body: '{"expiresIn":60}',
      });
      const { signedURL } = (await raw.json()) as { signedURL: string };
      expect(signedURL).toMatch(new RegExp(`^/object/sign/${b}/s/one.txt\\?token=`));
      const many = await files.createSignedUrls(['s/one.txt', 's/missing.txt'], 60);
      expect(many.data![0]).toMatchObject({
        error: null,
        path: 's/one.txt',
        signedURL: expect.stringContaining('token='),
      });
      expect(many.data![1]).toEqual({
        error: 'Either the object does not exist or you do not have access to it',
        path: 's/missing.txt',
        signedURL: null,
        signedUrl: null,
      });
      expect(await (await fetch(many.data![0]!.signedUrl!)).text()).toBe('signed bytes');
      const head = await fetch(one.data!.signedUrl, { method: 'HEAD' });
      expect(head.status).toBe(200);
    });

    it('uploads through a signed upload URL as the signer', async () => {
      const { h, b } = await setup();
      const sub = crypto.randomUUID();
      await h.sql(
        `create policy "own folder insert ${b}" on storage.objects for insert to authenticated with check (bucket_id = '${b}' and (storage.foldername(name))[1] = auth.uid()::text)`,
      );
      const user = (await h.user(sub)).from(b);
      const signed = await user.createSignedUploadUrl(`${sub}/up.txt`);
      expect(signed.error).toBeNull();
      expect(signed.data!.signedUrl).toContain('/object/upload/sign/');
      const up = await user.uploadToSignedUrl(`${sub}/up.txt`, signed.data!.token, 'via token');
      expect(up.error).toBeNull();
      expect(up.data).toMatchObject({ path: `${sub}/up.txt`, fullPath: `${b}/${sub}/up.txt` });
      const rows = await h.sql<{ owner_id: string }>(
        'select owner_id from storage.objects where bucket_id = $1 and name = $2',
        [b, `${sub}/up.txt`],
      );
      expect(rows[0]!.owner_id).toBe(sub);
      expect(await (await h.service.from(b).download(`${sub}/up.txt`)).data!.text()).toBe('via token');
      const again = await user.uploadToSignedUrl(`${sub}/up.txt`, signed.data!.token, 'again');
      expect(again.error).toMatchObject({ statusCode: '409' });
      const denied = await user.createSignedUploadUrl('someone-else/up.txt');
      expect(denied.error).toMatchObject({
        statusCode: '403',
        message: 'new row violates row-level security policy',
      });
      const wrongPath = await user.uploadToSignedUrl(`${sub}/other.txt`, signed.data!.token, 'x');
      expect(wrongPath.error).toMatchObject({ statusCode: '400', message: 'Invalid signature' });
    });
  });

  describe('limits', () => {
    it('enforces the bucket file_size_limit on raw, chunked and multipart bodies, leaving nothing behind', async () => {
      const { h, b, files } = await setup({ public: false, fileSizeLimit: '1KB' });
      expect((await files.upload('ok.bin', Buffer.alloc(1000))).error).toBeNull();
      const big = await files.upload('big.bin', Buffer.alloc(1001));
      expect(big.error).toMatchObject({
        statusCode: '413',
        message: 'The object exceeded the maximum allowed size',
      });
      const chunked = await files.upload('chunked.bin', bytes(5000) as never);
      expect(chunked.error).toMatchObject({ statusCode: '413' });
      const multipart = await files.upload('mp.bin', new Blob([new Uint8Array(5000)]));
      expect(multipart.error).toMatchObject({ statusCode: '413' });
      await eventually(async () => (await storedIn(h, b)).length === 1, { timeoutMs: 5000, intervalMs: 100 });
      expect(
        (await h.sql('select name from storage.objects where bucket_id = $1', [b])).map((r) => r.name),
      ).toEqual(['ok.bin']);
    });

    it('enforces allowed_mime_types with type/* entries', async () => {
      const { files } = await setup({ public: false, allowedMimeTypes: ['image/*', 'text/plain'] });
      expect((await files.upload('a.png', 'x', { contentType: 'image/png' })).error).toBeNull();
      expect((await files.upload('a.txt', 'x', { contentType: 'text/plain' })).error).toBeNull();
      const bad = await files.upload('b.txt', 'x');
      expect(bad.error).toMatchObject({
        statusCode: '415',
        message: 'mime type text/plain;charset=UTF-8 is not supported',
      });
      expect((await files.upload('c.pdf', new Blob(['x'], { type: 'application/pdf' }))).error).toMatchObject(
        { statusCode: '415' },
      );
    });

    it('applies the global limit', async () => {
      const h = get();
      const b = bucketName();
      await h.service.createBucket(b);
      const over = h.tp.platform.config.storageFileSizeLimit + 1;
      // Declare a body over the limit and send none of it: refused before reading.
      const body = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const req = request(new URL(`${h.base}/object/${b}/huge.bin`), {
          method: 'POST',
          headers: {
            authorization: `Bearer ${h.project.serviceRoleKey}`,
            'content-type': 'application/octet-stream',
            'content-length': String(over),
          },
        });
        req.on('response', (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c));
          res.on('end', () => {
            req.destroy();
            resolve(JSON.parse(text) as Record<string, unknown>);
          });
        });
        req.on('error', reject);
        req.flushHeaders();
      });
      expect(body).toMatchObject({ statusCode: '413', code: 'EntityTooLarge' });
    });
  });

  describe('consistency', () => {
    it('concurrent uploads to one key: one wins without upsert, the last wins intact with upsert, no orphans', async () => {
      const { h, b, files } = await setup();
      const bodies = Array.from({ length: 6 }, (_, i) => Buffer.alloc(256 * 1024 + i, String(i)));
      const results = await Promise.all(bodies.map((body) => files.upload('race.bin', body)));
      expect(results.filter((r) => r.error === null)).toHaveLength(1);
      expect(results.filter((r) => r.error?.statusCode === '409')).toHaveLength(5);
      const ups = await Promise.all(bodies.map((body) => files.upload('race.bin', body, { upsert: true })));
      expect(ups.every((r) => r.error === null)).toBe(true);
      const got = Buffer.from(await (await files.download('race.bin')).data!.arrayBuffer());
      expect(bodies.some((body) => body.equals(got))).toBe(true);
      const info = await files.info('race.bin');
      expect(info.data!.size).toBe(got.length);
      await eventually(async () => (await storedIn(h, b)).length === 1, { timeoutMs: 5000, intervalMs: 100 });
    });

    it('downloads racing overwrites always get a whole version', async () => {
      const { files } = await setup();
      const bodies = Array.from({ length: 4 }, (_, i) => Buffer.alloc(64 * 1024, String(i)));
      await files.upload('hot.bin', bodies[0]!);
      for (let round = 0; round < 8; round++) {
        const [, ...downloads] = await Promise.all([
          files.upload('hot.bin', bodies[round % 4]!, { upsert: true }),
          ...Array.from({ length: 4 }, () => files.download('hot.bin')),
        ]);
        for (const d of downloads) {
          expect(d.error).toBeNull();
          const got = Buffer.from(await (d.data as Blob).arrayBuffer());
          expect(bodies.some((body) => body.equals(got))).toBe(true);
        }
      }
    });

    it('an upload aborted mid-stream leaves no row and no bytes', async () => {
      const { h, b } = await setup();
      const url = new URL(`${h.base}/object/${b}/aborted.bin`);
      const total = 32 * 1024 * 1024;
      await new Promise<void>((resolve) => {
        const req = request(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${h.project.serviceRoleKey}`,
            'content-type': 'application/octet-stream',
            'content-length': String(total),
          },
        });
        req.on('error', () => resolve());
        let sent = 0;
        const chunk = Buffer.alloc(1024 * 1024, 7);
        const pump = () => {
          while (sent < 20 * 1024 * 1024) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          setTimeout(() => {
            req.destroy();
            resolve();
          }, 200);
        };
        pump();
      });
      await eventually(async () => (await storedIn(h, b)).length === 0, { timeoutMs: 5000, intervalMs: 100 });
      await new Promise((r) => setTimeout(r, 300));
      expect(await storedIn(h, b)).toEqual([]);
      expect(await h.sql('select 1 from storage.objects where bucket_id = $1', [b])).toEqual([]);
    });

    it('a database failure after the bytes are stored removes the bytes', async () => {
      const { h, b, files } = await setup();
      // The dry run (no version yet) passes; the commit (with the version) fails.
      await h.sql(`create or replace function public.fail_commit_${b.replace(/-/g, '_')}() returns trigger language plpgsql as $$
        begin if new.version is not null and new.bucket_id = '${b}' then raise exception 'commit refused'; end if; return new; end $$`);
      await h.sql(
        `create trigger fail_commit before insert or update on storage.objects for each row execute function public.fail_commit_${b.replace(/-/g, '_')}()`,
      );
      try {
        const up = await files.upload('doomed.txt', 'bytes');
        expect(up.error).toMatchObject({
          status: 500,
          statusCode: '500',
          message: 'database error, code: P0001',
        });
        expect(await storedIn(h, b)).toEqual([]);
        expect(await h.sql('select 1 from storage.objects where bucket_id = $1', [b])).toEqual([]);
      } finally {
        await h.sql('drop trigger fail_commit on storage.objects');
      }
    });

    it('streams a 64 MiB object up and down', async () => {
      const { h, b, files } = await setup();
      const size = 64 * 1024 * 1024;
      const expected = await md5Of(bytes(size, 42));
      const up = await files.upload('big/64.bin', bytes(size, 42) as never, {
        contentType: 'application/octet-stream',
      });
      expect(up.error).toBeNull();
      const res = await h.api(`/object/${b}/big/64.bin`, { token: h.project.serviceRoleKey });
      expect(res.headers.get('content-length')).toBe(String(size));
      expect(res.headers.get('etag')).toBe(`"${expected.md5}"`);
      expect(await md5Of(res.body as unknown as AsyncIterable<Uint8Array>)).toEqual(expected);
      const streamed = await files.download('big/64.bin').asStream();
      expect(streamed.error).toBeNull();
      expect(await md5Of(streamed.data as unknown as AsyncIterable<Uint8Array>)).toEqual(expected);
      const ranged = await h.api(`/object/${b}/big/64.bin`, {
        token: h.project.serviceRoleKey,
        headers: { range: `bytes=${size - 10}-` },
      });
      expect(ranged.status).toBe(206);
      expect((await ranged.arrayBuffer()).byteLength).toBe(10);
    }, 120_000);

    it('a download the client cuts off mid-stream releases the file; the next download is whole', async () => {
      const { h, b, files } = await setup();
      const size = 32 * 1024 * 1024;
      const expected = await md5Of(bytes(size, 7));
      expect(
        (
          await files.upload('cut/32.bin', bytes(size, 7) as never, {
            contentType: 'application/octet-stream',
          })
        ).error,
      ).toBeNull();
      // Files of this bucket the test process (which runs the server) holds open.
      const openFiles = () =>
        readdirSync('/proc/self/fd').filter((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`).includes(`/${b}/`);
          } catch {
            return false;
          }
        }).length;
      await new Promise<void>((resolve, reject) => {
        const req = request(new URL(`${h.base}/object/${b}/cut/32.bin`), {
          headers: { authorization: `Bearer ${h.project.serviceRoleKey}` },
        });
        req.on('response', (res) => {
          let got = 0;
          res.on('data', (c: Buffer) => {
            got += c.length;
            if (got >= 2 * 1024 * 1024) {
              res.destroy();
              req.destroy();
              resolve();
            }
          });
        });
        req.on('error', () => resolve());
        setTimeout(() => reject(new Error('no bytes arrived')), 30_000);
        req.end();
      });
      await eventually(async () => openFiles() === 0, { timeoutMs: 5000, intervalMs: 100 });
      const res = await h.api(`/object/${b}/cut/32.bin`, { token: h.project.serviceRoleKey });
      expect(await md5Of(res.body as unknown as AsyncIterable<Uint8Array>)).toEqual(expected);
    }, 120_000);
  });
}
