/**
 * The storage part of the hardening concurrency test (issue 12): 200 concurrent hostile storage
 * requests (NUL bytes in keys, bodies and metadata, overlong segments, traversal keys, bad tokens,
 * deep JSON), each a 4xx in the storage error shape; afterwards a normal request answers within
 * 5 s and the project's pool has no client checked out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketName, startStorage, type StorageHarness } from '../support/storage.js';

let h: StorageHarness;
let b: string;

beforeAll(async () => {
  h = await startStorage('file');
  b = bucketName('conc');
  await h.service.createBucket(b, { public: true });
  await h.service.from(b).upload('ok.txt', 'fine', { contentType: 'text/plain' });
});
afterAll(async () => h?.close());

function hostile(i: number, svc: string): () => Promise<Response> {
  const json =
    (path: string, body: unknown, method = 'POST') =>
    () =>
      h.api(path, {
        method,
        token: svc,
        headers: { 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
  const deep = `{"name":"deep","deep":${'['.repeat(5000)}"\\u0000"${']'.repeat(5000)}}`;
  const all: (() => Promise<Response>)[] = [
    () => h.api(`/object/${b}/nul%00-${i}.txt`, { method: 'POST', token: svc, body: 'x' }),
    () => h.api(`/object/${b}/${'s'.repeat(300)}/${i}.txt`, { method: 'POST', token: svc, body: 'x' }),
    () => h.api(`/object/${b}/../../etc/passwd`, { method: 'POST', token: svc, body: 'x' }),
    () => h.api(`/object/${b}/ok.txt`, { token: `bad-${i}` }),
    () =>
      h.api(`/object/${b}/meta-${i}.txt`, {
        method: 'POST',
        token: svc,
        headers: { 'x-metadata': Buffer.from('{"a":"\\u0000"}').toString('base64') },
        body: 'x',
      }),
    json(`/object/list/${b}`, { prefix: `\u0000${i}` }),
    json(`/object/list-v2/${b}`, { prefix: `a\u0000${i}` }),
    json('/bucket', { name: `n\u0000${i}` }),
    json('/object/move', { bucketId: b, sourceKey: 'ok.txt', destinationKey: `m\u0000${i}` }),
    json(`/object/sign/${b}`, { expiresIn: 60, paths: [`\u0000${i}`] }),
    json('/bucket', deep),
  ];
  return all[i % all.length] as () => Promise<Response>;
}

describe('200 concurrent hostile storage requests', () => {
  it('all answer 4xx in the storage shape; a normal request answers at once; no client leaks', async () => {
    const svc = h.project.serviceRoleKey;
    const responses = await Promise.all(Array.from({ length: 200 }, (_, i) => hostile(i, svc)()));
    for (const res of responses) {
      expect(res.status, res.url).toBeGreaterThanOrEqual(400);
      expect(res.status, res.url).toBeLessThan(500);
      const body = (await res.json()) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['code', 'error', 'message', 'statusCode']);
    }
    const normal = await Promise.race([
      h.api(`/object/${b}/ok.txt`),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer within 5 s')), 5000)),
    ]);
    expect(normal.status).toBe(200);
    expect(await normal.text()).toBe('fine');
    const pool = h.project.pool;
    expect(pool.totalCount - pool.idleCount).toBe(0);
    expect(pool.waitingCount).toBe(0);
    const rows = await h.sql('select count(*)::int as n from storage.objects where bucket_id = $1', [b]);
    expect(rows).toEqual([{ n: 1 }]);
  });
});
