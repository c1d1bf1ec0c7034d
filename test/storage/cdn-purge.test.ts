/**
 * CDN cache purge (`DELETE /cdn[/{bucket}[/{path}]][?transformations=true]`, upstream's routes):
 * the service role's purge is forwarded to the configured purge endpoint (a real HTTP server here)
 * with upstream's body and the bearer key; an anon or authenticated end user cannot purge; a purge
 * endpoint that fails is a 502, not a 500.
 */
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketName, startStorage, type StorageHarness } from '../support/storage.js';

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

let seen: Seen[] = [];
let failWith: number | undefined;
let endpoint: Server;
let h: StorageHarness;
const PURGE_KEY = 'purge-key-for-the-test';

beforeAll(async () => {
  endpoint = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(text || 'null') });
      res.writeHead(failWith ?? 200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  const port = (endpoint.address() as { port: number }).port;
  h = await startStorage('file', {
    storageCdnPurge: { url: `http://127.0.0.1:${port}/cdn-api`, key: PURGE_KEY },
  });
});

afterAll(async () => {
  await h?.close();
  await new Promise((resolve) => endpoint?.close(resolve));
});

const purge = (path: string, token: string) => h.api(path, { method: 'DELETE', token });

describe('CDN cache purge', () => {
  it('forwards each purge scope to <url>/purge with the key, as upstream words the body', async () => {
    const b = bucketName('cdn');
    const ref = h.project.ref;
    const svc = h.project.serviceRoleKey;
    const cases: [string, Record<string, unknown>][] = [
      [`/cdn/${b}/folder/cat%20one.png`, { type: 'object', bucketId: b, objectName: 'folder/cat one.png' }],
      [
        `/cdn/${b}/cat.png?transformations=true`,
        { type: 'object-transforms', bucketId: b, objectName: 'cat.png' },
      ],
      [`/cdn/${b}`, { type: 'bucket', bucketId: b }],
      [`/cdn/${b}?transformations=true`, { type: 'bucket-transforms', bucketId: b }],
      ['/cdn/', { type: 'tenant' }],
      ['/cdn?transformations=true', { type: 'tenant-transforms' }],
    ];
    for (const [path, body] of cases) {
      seen = [];
      const res = await purge(path, svc);
      expect([path, res.status, await res.json()]).toEqual([path, 200, { message: 'success' }]);
      expect(seen).toHaveLength(1);
      expect(seen[0]?.path).toBe('/cdn-api/purge');
      expect(seen[0]?.headers.authorization).toBe(`Bearer ${PURGE_KEY}`);
      expect(seen[0]?.body).toEqual({ ...body, tenant: { ref } });
    }
  });

  it('attacker: anon and authenticated end users cannot purge; bad keys and flags are 400; nothing is forwarded', async () => {
    seen = [];
    const user = await h.userToken('00000000-0000-4000-8000-0000000000c1');
    for (const token of [h.project.anonKey, user]) {
      for (const path of ['/cdn', '/cdn/avatars', '/cdn/avatars/a.png']) {
        const res = await purge(path, token);
        expect([path, res.status, ((await res.json()) as { statusCode: string }).statusCode]).toEqual([
          path,
          403,
          '403',
        ]);
      }
    }
    const none = await h.api('/cdn', { method: 'DELETE' });
    expect(none.status).toBe(403);
    const svc = h.project.serviceRoleKey;
    expect((await purge('/cdn/avatars/a%7Bb%7D.png', svc)).status).toBe(400);
    expect((await purge('/cdn/avatars?transformations=maybe', svc)).status).toBe(400);
    expect(seen).toHaveLength(0);
  });

  it('a purge endpoint that refuses or is gone: 502 in the storage envelope', async () => {
    failWith = 503;
    try {
      const res = await purge('/cdn', h.project.serviceRoleKey);
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({ statusCode: '502', code: 'CdnPurgeFailed' });
    } finally {
      failWith = undefined;
    }
  });
});
