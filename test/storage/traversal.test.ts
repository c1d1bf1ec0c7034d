/** Keys and bucket names that try to leave their directory are refused; nothing lands outside. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { startStorage, bucketName, type StorageHarness } from '../support/storage.js';
import { FileBackend } from '../../src/storage/backend/file.js';
import { StorageClient } from '@supabase/storage-js';

let h: StorageHarness;
let b: string;
beforeAll(async () => {
  h = await startStorage('file');
  b = bucketName('trav');
  await h.service.createBucket(b);
});
afterAll(async () => h?.close());

/** A raw request with the path sent verbatim (fetch would normalise dot segments and backslashes). */
function rawRequest(
  method: string,
  path: string,
  body?: string,
): Promise<{ status: number; json: { code: string; message: string } }> {
  const url = new URL(h.base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: `${url.pathname}${path}`,
        headers: { authorization: `Bearer ${h.project.serviceRoleKey}`, 'content-type': 'text/plain' },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text || '{}') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const upload = (path: string) => rawRequest('POST', `/object/${path}`, 'x');

describe('path traversal', () => {
  it.each([
    ['../escape.txt'],
    ['a/../../escape.txt'],
    ['a/%2E%2E/%2E%2E/escape.txt'],
    ['a%2F..%2F..%2Fescape.txt'],
    ['..%2F..%2Fescape.txt'],
    ['./a.txt'],
    ['a\\..\\b.txt'],
    ['%00.txt'],
  ])('refuses the key %s', async (key) => {
    const res = await upload(`${b}/${key}`);
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('InvalidKey');
  });

  it('a leading slash is an empty first segment (a key of its own, as upstream), stored inside the bucket', async () => {
    for (const key of ['%2Fetc%2Fpasswd', '/etc/passwd', '//etc/passwd']) {
      const res = await upload(`${b}/${key}`);
      expect([key, res.status]).toEqual([key, key === '/etc/passwd' ? 400 : 200]);
    }
    // `%2Fetc%2Fpasswd` and `/etc/passwd` are the same key: the second is a duplicate.
    const stored = (readdirSync(h.project.filesDir, { recursive: true }) as string[]).filter((f) =>
      f.includes('passwd'),
    );
    expect(stored.length).toBeGreaterThan(0);
    for (const f of stored) expect(f.startsWith(join('storage', 'buckets', b, '%', ''))).toBe(true);
  });

  it('refuses dot bucket names and encoded slashes in bucket names', async () => {
    for (const name of ['..', '.', 'a%2Fb']) {
      const res = await h.api('/bucket', {
        method: 'POST',
        token: h.project.serviceRoleKey,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: decodeURIComponent(name) }),
      });
      expect(((await res.json()) as { code: string }).code).toBe('InvalidBucketName');
    }
    for (const bucket of ['..', '%2E%2E', '.']) {
      const res = await upload(`${bucket}/x.txt`);
      expect(res.json.code).toBe('InvalidBucketName');
    }
  });

  it('refuses traversal on downloads, info, signing, move and copy destinations', async () => {
    const svc = h.project.serviceRoleKey;
    await h.service.from(b).upload('ok.txt', 'ok');
    for (const path of [
      `/object/${b}/a%2F..%2F..%2Fx`,
      `/object/info/${b}/../x`,
      `/object/authenticated/${b}/..%2F..%2Fx`,
      `/object/sign/${b}/../../x?token=x`,
    ]) {
      const res = await rawRequest('GET', path);
      expect([res.json.code, res.json.message]).toEqual(
        path.includes('/sign/')
          ? ['InvalidJWT', 'Invalid Compact JWS']
          : ['InvalidKey', expect.stringContaining('Invalid key')],
      );
    }
    const del = await rawRequest('DELETE', `/object/${b}/../../etc`);
    expect(del.json.code).toBe('InvalidKey');
    void svc;
    const move = await h.service.from(b).move('ok.txt', '../../outside.txt');
    expect(move.error).toMatchObject({ statusCode: '400', message: 'Invalid key: ../../outside.txt' });
    const copy = await h.service.from(b).copy('ok.txt', '/abs/../../x.txt');
    expect(copy.error).toMatchObject({ statusCode: '400' });
  });

  it('stored files stay inside the storage folder', () => {
    const files = readdirSync(h.project.filesDir, { recursive: true }) as string[];
    expect(files.every((f) => f === 'storage' || f.startsWith(join('storage', '')))).toBe(true);
    expect(files.some((f) => f.includes('escape') || f.includes('outside'))).toBe(false);
    const inBucket = join('storage', 'buckets', b, '%', '');
    expect(files.filter((f) => f.includes('passwd')).every((f) => f.startsWith(inBucket))).toBe(true);
  });

  it("projects are isolated: another project's keys are refused and its objects are its own", async () => {
    const other = await h.tp.platform.createProject({ name: 'storage-other', organizationId: 'default-org' });
    const otherClient = new StorageClient(`${h.tp.url}/project/${other.ref}/storage/v1`, {
      apikey: other.anonKey,
      Authorization: `Bearer ${other.serviceRoleKey}`,
    });
    expect((await otherClient.createBucket(b)).error).toBeNull();
    expect((await otherClient.from(b).upload('ok.txt', 'other project')).error).toBeNull();
    expect(await (await otherClient.from(b).download('ok.txt')).data!.text()).toBe('other project');
    expect(await (await h.service.from(b).download('ok.txt')).data!.text()).toBe('ok');
    const crossed = new StorageClient(`${h.tp.url}/project/${other.ref}/storage/v1`, {
      Authorization: `Bearer ${h.project.serviceRoleKey}`,
    });
    expect((await crossed.listBuckets()).error).toMatchObject({
      statusCode: '403',
      message: 'signature verification failed',
    });
    expect(other.filesDir).not.toBe(h.project.filesDir);
  });

  it('the file backend itself never builds a path that leaves the bucket', () => {
    const fb = new FileBackend('/tmp/strata-root');
    const v = '00000000-0000-0000-0000-000000000000';
    // A dot segment that got past the key rules would still name a directory of its own.
    expect(fb.pathOf({ bucket: b, key: '../../x', version: v })).toBe(
      `/tmp/strata-root/buckets/${b}/%../%../x/~${v}`,
    );
    expect(() => fb.pathOf({ bucket: '..', key: 'x', version: v })).toThrow();
    expect(() => fb.pathOf({ bucket: b, key: 'x', version: '../../../etc' })).toThrow();
    expect(fb.pathOf({ bucket: b, key: 'a/b.txt', version: v })).toBe(
      `/tmp/strata-root/buckets/${b}/a/b.txt/~${v}`,
    );
  });
});
