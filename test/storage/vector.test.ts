/**
 * Vector buckets (`POST /storage/v1/vector/<Operation>`, upstream's S3 Vectors-shaped routes):
 * bucket and index lifecycle, paging and segments, the request limits, exact nearest neighbours
 * (cosine and Euclidean, ordered, with distances), metadata filters, the service-role-only guard,
 * and one project's vector buckets out of another's sight.
 */
import { StorageVectorsClient } from '@supabase/storage-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { startStorage, type StorageHarness } from './harness.js';

let h: StorageHarness;
let svc: string;

interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: replies are read field by field in the checks
  body: any;
}

/** POST /vector/<op> with a JSON body as `token` (default: the service role); `base` picks the project. */
async function call(op: string, body: unknown, token: string | null = svc, base?: string): Promise<Reply> {
  const init = {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(token ? { token } : {}),
  };
  const res = base
    ? await fetch(`${base}/vector/${op}`, {
        ...init,
        headers: { ...init.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      })
    : await h.api(`/vector/${op}`, init);
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function ok(op: string, body: unknown): Promise<Reply['body']> {
  const r = await call(op, body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

async function refused(op: string, body: unknown, code: string, status = 400): Promise<string> {
  const r = await call(op, body);
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ statusCode: String(status), code });
  return r.body.message as string;
}

beforeAll(async () => {
  h = await startStorage('file');
  svc = h.project.serviceRoleKey;
});
afterAll(async () => h?.close());

describe('vector buckets and indexes', () => {
  it('create, get, list by pages, delete; names are unique; a bucket with indexes is not deleted', async () => {
    await ok('CreateVectorBucket', { vectorBucketName: 'life-a' });
    await ok('CreateVectorBucket', { vectorBucketName: 'life-b' });
    await ok('CreateVectorBucket', { vectorBucketName: 'other-c' });
    expect(
      await refused('CreateVectorBucket', { vectorBucketName: 'life-a' }, 'ConflictException', 409),
    ).toBe('vector bucket "life-a" already exists');

    const first = await ok('ListVectorBuckets', { prefix: 'life-', maxResults: 1 });
    expect(first.vectorBuckets).toEqual([{ vectorBucketName: 'life-a', creationTime: expect.any(Number) }]);
    expect(first.nextToken).toBeTruthy();
    const second = await ok('ListVectorBuckets', {
      prefix: 'life-',
      maxResults: 1,
      nextToken: first.nextToken,
    });
    expect(second.vectorBuckets.map((b: { vectorBucketName: string }) => b.vectorBucketName)).toEqual([
      'life-b',
    ]);
    expect(second.nextToken).toBeUndefined();

    const got = await ok('GetVectorBucket', { vectorBucketName: 'life-a' });
    expect(got.vectorBucket.vectorBucketName).toBe('life-a');
    expect(Math.abs(got.vectorBucket.creationTime - Date.now() / 1000)).toBeLessThan(120);
    expect(await refused('GetVectorBucket', { vectorBucketName: 'nope' }, 'NotFoundException', 404)).toBe(
      'resource "nope" not found',
    );

    const index = (indexName: string, extra = {}) => ({
      vectorBucketName: 'life-a',
      indexName,
      dataType: 'float32',
      dimension: 3,
      distanceMetric: 'cosine',
      ...extra,
    });
    await ok(
      'CreateIndex',
      index('idx-one', { metadataConfiguration: { nonFilterableMetadataKeys: ['note'] } }),
    );
    await ok('CreateIndex', index('idx-two', { distanceMetric: 'euclidean' }));
    await ok('CreateIndex', index('zzz-three'));
    await refused('CreateIndex', index('idx-one'), 'ConflictException', 409);
    await refused('CreateIndex', { ...index('idx-x'), vectorBucketName: 'nope' }, 'NotFoundException', 404);
    await refused('CreateIndex', index('Bad_Name'), 'InvalidRequest');
    await refused('CreateIndex', index('idx-x', { dimension: 4097 }), 'InvalidRequest');
    await refused('CreateIndex', index('idx-x', { distanceMetric: 'dot' }), 'InvalidRequest');

    const got1 = await ok('GetIndex', { vectorBucketName: 'life-a', indexName: 'idx-one' });
    expect(got1.index).toEqual({
      indexName: 'idx-one',
      vectorBucketName: 'life-a',
      dataType: 'float32',
      dimension: 3,
      distanceMetric: 'cosine',
      metadataConfiguration: { nonFilterableMetadataKeys: ['note'] },
      creationTime: expect.any(Number),
    });
    await refused(
      'GetIndex',
      { vectorBucketName: 'life-a', indexName: 'idx-nope' },
      'NotFoundException',
      404,
    );

    const p1 = await ok('ListIndexes', { vectorBucketName: 'life-a', prefix: 'idx-', maxResults: 1 });
    expect(p1.indexes.map((i: { indexName: string }) => i.indexName)).toEqual(['idx-one']);
    const p2 = await ok('ListIndexes', {
      vectorBucketName: 'life-a',
      prefix: 'idx-',
      maxResults: 1,
      nextToken: p1.nextToken,
    });
    expect(p2.indexes).toEqual([
      { indexName: 'idx-two', vectorBucketName: 'life-a', creationTime: expect.any(Number) },
    ]);
    expect(p2.nextToken).toBeUndefined();
    expect((await ok('ListIndexes', { vectorBucketName: 'life-a' })).indexes).toHaveLength(3);

    expect(await refused('DeleteVectorBucket', { vectorBucketName: 'life-a' }, 'VectorBucketNotEmpty')).toBe(
      'Vector Bucket "life-a" not empty',
    );
    for (const indexName of ['idx-one', 'idx-two', 'zzz-three']) {
      await ok('DeleteIndex', { vectorBucketName: 'life-a', indexName });
    }
    await refused(
      'DeleteIndex',
      { vectorBucketName: 'life-a', indexName: 'idx-one' },
      'NotFoundException',
      404,
    );
    for (const name of ['life-a', 'life-b', 'other-c'])
      await ok('DeleteVectorBucket', { vectorBucketName: name });
    await refused('GetVectorBucket', { vectorBucketName: 'life-a' }, 'NotFoundException', 404);
    await refused('DeleteVectorBucket', { vectorBucketName: 'life-a' }, 'NotFoundException', 404);
  });

  it('works through storage-js StorageVectorsClient', async () => {
    const client = new StorageVectorsClient(`${h.base}/vector`, {
      headers: { Authorization: `Bearer ${svc}` },
    });
    expect((await client.createBucket('js-bucket')).error).toBeNull();
    const bucket = client.from('js-bucket');
    expect(
      (
        await bucket.createIndex({
          indexName: 'js-idx',
          dataType: 'float32',
          dimension: 2,
          distanceMetric: 'cosine',
        })
      ).error,
    ).toBeNull();
    const idx = bucket.index('js-idx');
    expect((await idx.putVectors({ vectors: [{ key: 'k', data: { float32: [1, 2] } }] })).error).toBeNull();
    const q = await idx.queryVectors({ queryVector: { float32: [1, 2] }, topK: 1, returnDistance: true });
    expect(q.data?.vectors[0]?.key).toBe('k');
    expect(q.data?.vectors[0]?.distance).toBeCloseTo(0, 6);
    const missing = await client.getBucket('js-missing');
    expect(missing.error?.message).toBe('resource "js-missing" not found');
    expect((await bucket.deleteIndex('js-idx')).error).toBeNull();
    expect((await client.deleteBucket('js-bucket')).error).toBeNull();
  });
});

describe('vectors', () => {
  const B = 'vec-main';
  const at = (indexName: string) => ({ vectorBucketName: B, indexName });

  beforeAll(async () => {
    await ok('CreateVectorBucket', { vectorBucketName: B });
    const make = (indexName: string, distanceMetric: string, dimension: number, extra = {}) =>
      ok('CreateIndex', { ...at(indexName), dataType: 'float32', dimension, distanceMetric, ...extra });
    await make('cos', 'cosine', 2, {
      metadataConfiguration: { nonFilterableMetadataKeys: ['private-note'] },
    });
    await make('euc', 'euclidean', 2);
    await make('many', 'cosine', 2);
  });

  it('put, get (data and metadata on request), replace, delete', async () => {
    await ok('PutVectors', {
      ...at('cos'),
      vectors: [
        { key: 'a', data: { float32: [1, 0] }, metadata: { group: 'g', score: 0.75, tags: ['x', 'y'] } },
        { key: 'b', data: { float32: [0.1, 1] } },
      ],
    });
    const full = await ok('GetVectors', {
      ...at('cos'),
      keys: ['a', 'b', 'missing'],
      returnData: true,
      returnMetadata: true,
    });
    expect(full.vectors).toHaveLength(2);
    const a = full.vectors.find((v: { key: string }) => v.key === 'a');
    expect(a).toEqual({
      key: 'a',
      data: { float32: [1, 0] },
      metadata: { group: 'g', score: 0.75, tags: ['x', 'y'] },
    });
    const b = full.vectors.find((v: { key: string }) => v.key === 'b');
    expect(b.data.float32[0]).toBeCloseTo(0.1, 6);
    expect(b.metadata).toEqual({});
    expect((await ok('GetVectors', { ...at('cos'), keys: ['a'] })).vectors).toEqual([{ key: 'a' }]);

    await ok('PutVectors', {
      ...at('cos'),
      vectors: [{ key: 'a', data: { float32: [2, 2] }, metadata: { v: 2 } }],
    });
    const replaced = await ok('GetVectors', {
      ...at('cos'),
      keys: ['a'],
      returnData: true,
      returnMetadata: true,
    });
    expect(replaced.vectors).toEqual([{ key: 'a', data: { float32: [2, 2] }, metadata: { v: 2 } }]);

    await ok('DeleteVectors', { ...at('cos'), keys: ['a', 'b', 'never-there'] });
    expect((await ok('GetVectors', { ...at('cos'), keys: ['a', 'b'] })).vectors).toEqual([]);
    await refused(
      'PutVectors',
      { ...at('nope'), vectors: [{ key: 'k', data: { float32: [1, 1] } }] },
      'NotFoundException',
      404,
    );
  });

  it('lists by pages (nextToken) and by disjoint segments', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `k-${String(i).padStart(2, '0')}`);
    await ok('PutVectors', {
      ...at('many'),
      vectors: keys.map((key, i) => ({ key, data: { float32: [i + 1, 1] } })),
    });

    const all = await ok('ListVectors', at('many'));
    expect(all.vectors.map((v: { key: string }) => v.key)).toEqual(keys);
    expect(all.nextToken).toBeUndefined();

    const seen: string[] = [];
    let nextToken: string | undefined;
    do {
      const p = await ok('ListVectors', { ...at('many'), maxResults: 15, nextToken, returnData: true });
      expect(p.vectors.length).toBeLessThanOrEqual(15);
      for (const v of p.vectors) {
        expect(v.data.float32).toHaveLength(2);
        seen.push(v.key);
      }
      nextToken = p.nextToken;
    } while (nextToken);
    expect(seen).toEqual(keys);

    const segments = await Promise.all(
      [0, 1, 2].map((segmentIndex) => ok('ListVectors', { ...at('many'), segmentCount: 3, segmentIndex })),
    );
    const bySegment = segments.flatMap((s) => s.vectors.map((v: { key: string }) => v.key));
    expect(bySegment.sort()).toEqual(keys);
    expect(segments.filter((s) => s.vectors.length > 0).length).toBeGreaterThan(1);

    expect(await refused('ListVectors', { ...at('many'), segmentIndex: 0 }, 'InvalidParameter')).toBe(
      'segmentCount and segmentIndex must be provided together',
    );
    await refused('ListVectors', { ...at('many'), segmentCount: 2, segmentIndex: 2 }, 'InvalidParameter');
    await refused('ListVectors', { ...at('many'), segmentCount: 17, segmentIndex: 0 }, 'InvalidRequest');
    await refused('ListVectors', { ...at('many'), maxResults: 1001 }, 'InvalidRequest');
  });

  it('limits: key length, key counts, missing key, duplicates, dimension, zero vectors, types', async () => {
    const put = (vectors: unknown[], index = 'many') => call('PutVectors', { ...at(index), vectors });
    const longest = 'L'.repeat(1024);
    expect((await put([{ key: longest, data: { float32: [1, 1] } }])).status).toBe(200);
    const tooLong = await put([{ key: `${longest}x`, data: { float32: [1, 1] } }]);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toEqual({
      statusCode: '400',
      error: 'Error',
      code: 'InvalidRequest',
      message: 'body/vectors/0/key must NOT have more than 1024 characters',
    });
    const noKey = await put([{ data: { float32: [1, 1] } }]);
    expect(noKey.status).toBe(400);
    expect(noKey.body.message).toBe("body/vectors/0 must have required property 'key'");

    const keys = (n: number) => Array.from({ length: n }, (_, i) => `m-${i}`);
    await refused('GetVectors', { ...at('many'), keys: keys(101) }, 'InvalidRequest');
    expect((await call('GetVectors', { ...at('many'), keys: keys(100) })).status).toBe(200);
    await refused('DeleteVectors', { ...at('many'), keys: keys(501) }, 'InvalidRequest');
    expect((await call('DeleteVectors', { ...at('many'), keys: keys(500) })).status).toBe(200);
    await refused('PutVectors', { ...at('many'), vectors: [] }, 'InvalidRequest');

    const dup = [
      { key: 'd', data: { float32: [1, 1] } },
      { key: 'd', data: { float32: [1, 2] } },
    ];
    expect(await refused('PutVectors', { ...at('many'), vectors: dup }, 'InvalidParameter')).toBe(
      'Request must not contain duplicate keys',
    );
    expect(
      await refused(
        'PutVectors',
        { ...at('many'), vectors: [{ key: 'w', data: { float32: [1, 2, 3] } }] },
        'InvalidParameter',
      ),
    ).toBe("Invalid vector for key 'w': dimension 3 does not match the index dimension 2");
    expect(
      await refused(
        'PutVectors',
        { ...at('many'), vectors: [{ key: 'z', data: { float32: [0, 0] } }] },
        'InvalidParameter',
      ),
    ).toMatch(/zero vector/);
    // The batch is all or nothing: a good vector before a bad one is not stored.
    await refused(
      'PutVectors',
      {
        ...at('many'),
        vectors: [
          { key: 'good', data: { float32: [1, 1] } },
          { key: 'bad', data: { float32: [1e39, 1] } },
        ],
      },
      'InvalidParameter',
    );
    expect((await ok('GetVectors', { ...at('many'), keys: ['good'] })).vectors).toEqual([]);
    // No coercion: a numeric string is not a number, a nested object is not metadata.
    await refused(
      'PutVectors',
      { ...at('many'), vectors: [{ key: 's', data: { float32: ['1', 1] } }] },
      'InvalidRequest',
    );
    await refused(
      'PutVectors',
      { ...at('many'), vectors: [{ key: 'o', data: { float32: [1, 1] }, metadata: { a: { b: 1 } } }] },
      'InvalidRequest',
    );
    // A number beyond a double's range parses as Infinity: refused, not stored as null.
    const huge = await h.api('/vector/PutVectors', {
      method: 'POST',
      token: svc,
      headers: { 'content-type': 'application/json' },
      body: `{"vectorBucketName":"${B}","indexName":"many","vectors":[{"key":"inf","data":{"float32":[1,1]},"metadata":{"n":1e400}}]}`,
    });
    expect(huge.status).toBe(400);
    expect((await huge.json()).code).toBe('InvalidRequest');
    const wide = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, i]));
    await refused(
      'PutVectors',
      { ...at('many'), vectors: [{ key: 'm', data: { float32: [1, 1] }, metadata: wide }] },
      'InvalidParameter',
    );
    // 2 KiB of filterable metadata at most; a non-filterable key may hold more.
    const big = 'b'.repeat(3000);
    await refused(
      'PutVectors',
      { ...at('many'), vectors: [{ key: 'm', data: { float32: [1, 1] }, metadata: { big } }] },
      'InvalidParameter',
    );
    expect(
      (await put([{ key: 'm', data: { float32: [1, 1] }, metadata: { 'private-note': big } }], 'cos')).status,
    ).toBe(200);
    await ok('DeleteVectors', { ...at('cos'), keys: ['m'] });

    const query = (extra: object) => ({ ...at('many'), queryVector: { float32: [1, 1] }, topK: 1, ...extra });
    await refused('QueryVectors', query({ queryVector: { float32: [1, 1, 1] } }), 'InvalidParameter');
    await refused('QueryVectors', query({ queryVector: { float32: [0, 0] } }), 'InvalidParameter');
    await refused('QueryVectors', query({ topK: 101 }), 'InvalidRequest');
    await refused('QueryVectors', query({ topK: '1' }), 'InvalidRequest');
    await refused('QueryVectors', query({ surprise: true }), 'InvalidRequest');
  });

  it('cosine: nearest first, distance 1 - cos, returned only when asked', async () => {
    await ok('PutVectors', {
      ...at('cos'),
      vectors: [
        { key: 'east', data: { float32: [1, 0] } },
        { key: 'north-east', data: { float32: [3, 3] } },
        { key: 'north', data: { float32: [0, 2] } },
        { key: 'west', data: { float32: [-5, 0] } },
      ],
    });
    const r = await ok('QueryVectors', {
      ...at('cos'),
      queryVector: { float32: [2, 0] },
      topK: 4,
      returnDistance: true,
    });
    expect(r.distanceMetric).toBe('cosine');
    expect(r.vectors.map((v: { key: string }) => v.key)).toEqual(['east', 'north-east', 'north', 'west']);
    const d = r.vectors.map((v: { distance: number }) => v.distance);
    expect(d[0]).toBeCloseTo(0, 6);
    expect(d[1]).toBeCloseTo(1 - Math.SQRT1_2, 6);
    expect(d[2]).toBeCloseTo(1, 6);
    expect(d[3]).toBeCloseTo(2, 6);
    const top2 = await ok('QueryVectors', { ...at('cos'), queryVector: { float32: [0, 1] }, topK: 2 });
    expect(top2.vectors).toEqual([{ key: 'north' }, { key: 'north-east' }]);
    await ok('DeleteVectors', { ...at('cos'), keys: ['east', 'north-east', 'north', 'west'] });
  });

  it('euclidean: true L2 distances, nearest first among distractors', async () => {
    const distractors = Array.from({ length: 30 }, (_, i) => ({
      key: `far-${i}`,
      data: { float32: [100 + i, -100 - i] },
    }));
    await ok('PutVectors', {
      ...at('euc'),
      vectors: [
        { key: 'origin', data: { float32: [0, 0] } },
        { key: 'near', data: { float32: [3, 4] } },
        { key: 'far', data: { float32: [8, 15] } },
        ...distractors,
      ],
    });
    const r = await ok('QueryVectors', {
      ...at('euc'),
      queryVector: { float32: [0, 0] },
      topK: 3,
      returnDistance: true,
    });
    expect(r.distanceMetric).toBe('euclidean');
    expect(r.vectors.map((v: { key: string }) => v.key)).toEqual(['origin', 'near', 'far']);
    expect(r.vectors.map((v: { distance: number }) => v.distance)).toEqual([0, 5, 17]);
  });

  describe('metadata filters', () => {
    beforeAll(async () => {
      await ok('PutVectors', {
        ...at('cos'),
        vectors: [
          {
            key: 'f1',
            data: { float32: [1, 0] },
            metadata: {
              group: 'a',
              score: 0.75,
              'user-id': 'u1',
              tags: ['red', 'blue'],
              on: true,
              'private-note': 'p',
            },
          },
          {
            key: 'f2',
            data: { float32: [1, 0.2] },
            metadata: { group: 'a', score: 10, 'user-id': 'u2', tags: ['green'], on: false },
          },
          { key: 'f3', data: { float32: [1, 0.4] }, metadata: { group: 'b', score: 5, count: '10' } },
          { key: 'f4', data: { float32: [1, 0.6] }, metadata: { group: 'b', score: 'high', count: 10 } },
        ],
      });
    });

    const keysFor = async (filter: unknown) => {
      const r = await ok('QueryVectors', {
        ...at('cos'),
        queryVector: { float32: [1, 0] },
        topK: 10,
        filter,
        returnMetadata: true,
      });
      return r.vectors.map((v: { key: string }) => v.key).filter((k: string) => /^f\d$/.test(k));
    };

    it('equality, arrays, hyphenated keys, typed values', async () => {
      expect(await keysFor({ group: 'a' })).toEqual(['f1', 'f2']);
      expect(await keysFor({ group: { $eq: 'b' } })).toEqual(['f3', 'f4']);
      expect(await keysFor({ 'user-id': 'u1' })).toEqual(['f1']);
      expect(await keysFor({ tags: 'blue' })).toEqual(['f1']);
      expect(await keysFor({ on: false })).toEqual(['f2']);
      expect(await keysFor({ count: 10 })).toEqual(['f4']);
      expect(await keysFor({ count: '10' })).toEqual(['f3']);
      expect(await keysFor({ group: 'a', score: 10 })).toEqual(['f2']);
    });

    it('$ne, $gt, $gte, $lt, $lte, $in, $nin, $exists', async () => {
      expect(await keysFor({ group: { $ne: 'a' } })).toEqual(['f3', 'f4']);
      expect(await keysFor({ tags: { $ne: 'red' } })).toEqual(['f2']);
      expect(await keysFor({ score: { $gte: 5 } })).toEqual(['f2', 'f3']);
      expect(await keysFor({ score: { $gt: 5 } })).toEqual(['f2']);
      expect(await keysFor({ score: { $lt: 5 } })).toEqual(['f1']);
      expect(await keysFor({ score: { $lte: 5, $gt: 1 } })).toEqual(['f3']);
      expect(await keysFor({ tags: { $in: ['green', 'black'] } })).toEqual(['f2']);
      expect(await keysFor({ score: { $in: [0.75, 'high'] } })).toEqual(['f1', 'f4']);
      expect(await keysFor({ group: { $nin: ['b'] } })).toEqual(['f1', 'f2']);
      expect(await keysFor({ tags: { $exists: true } })).toEqual(['f1', 'f2']);
      expect(await keysFor({ tags: { $exists: false } })).toEqual(['f3', 'f4']);
    });

    it('$and and $or, nested', async () => {
      expect(await keysFor({ $or: [{ group: 'b' }, { 'user-id': 'u1' }] })).toEqual(['f1', 'f3', 'f4']);
      expect(
        await keysFor({ $and: [{ group: 'b' }, { $or: [{ count: 10 }, { score: { $lt: 6 } }] }] }),
      ).toEqual(['f3', 'f4']);
    });

    it('refuses non-filterable keys and malformed filters with 400 InvalidParameter', async () => {
      const bad = (filter: unknown) =>
        refused(
          'QueryVectors',
          { ...at('cos'), queryVector: { float32: [1, 0] }, topK: 2, filter },
          'InvalidParameter',
        );
      expect(await bad({ 'private-note': 'p' })).toBe(
        'Metadata key "private-note" is configured as non-filterable',
      );
      expect(await bad({ $or: [{ group: 'a' }, { 'private-note': { $exists: true } }] })).toMatch(
        /non-filterable/,
      );
      expect(await bad({ score: { $gte: '5' } })).toBe('$gte requires a number for "score"');
      expect(await bad({ score: { $regex: 'x' } })).toBe('Unsupported field operator: $regex');
      expect(await bad({ tags: { $in: [] } })).toBe('$in requires a non-empty array for "tags"');
      expect(await bad({ $and: [{ group: 'a' }], group: 'a' })).toMatch(/only key/);
      expect(await bad({ $not: { group: 'a' } })).toMatch(/Unexpected operator/);
      expect(await bad({})).toMatch(/at least one clause/);
      expect(await bad({ group: null })).toMatch(/needs a string, number or boolean/);
      let deep: unknown = { group: 'a' };
      for (let i = 0; i < 11; i++) deep = { $and: [deep] };
      expect(await bad(deep)).toMatch(/nest/);
    });
  });
});

describe('who may call', () => {
  it('anon, authenticated, a missing or forged token: 403 AccessDenied', async () => {
    const body = { vectorBucketName: 'guarded' };
    const denied = (message: string) => ({
      statusCode: '403',
      error: 'Unauthorized',
      code: 'AccessDenied',
      message,
    });
    for (const token of [h.project.anonKey, await h.userToken('00000000-0000-4000-8000-000000000001')]) {
      const r = await call('CreateVectorBucket', body, token);
      expect(r.status).toBe(403);
      expect(r.body).toEqual(denied('Access denied: Invalid role'));
    }
    const none = await call('ListVectorBuckets', {}, null);
    expect(none.status).toBe(403);
    expect(none.body.code).toBe('AccessDenied');
    const forged = await call('ListVectorBuckets', {}, `${svc.slice(0, -4)}AAAA`);
    expect(forged.status).toBe(403);
    expect(forged.body.code).toBe('AccessDenied');
    await refused('GetVectorBucket', body, 'NotFoundException', 404);
  });

  it('the tables are out of reach of anon and authenticated in SQL', async () => {
    const rows = await h.sql<{ role: string; t: string; can: boolean }>(
      `select r as role, t, has_table_privilege(r, t, 'select') as can
         from unnest(array['anon', 'authenticated']) r,
              unnest(array['storage.buckets_vectors', 'storage.vector_indexes', 'storage.vectors']) t`,
    );
    expect(rows.every((r) => !r.can)).toBe(true);
  });
});

describe('projects', () => {
  let other: ProjectContext;
  let otherBase: string;

  beforeAll(async () => {
    other = await h.tp.platform.createProject({ name: 'vectors-other', organizationId: 'default-org' });
    otherBase = `${h.tp.url}/project/${other.ref}/storage/v1`;
  });

  it("a project's vector buckets are not visible from another; its key is refused there", async () => {
    expect(
      (await call('CreateVectorBucket', { vectorBucketName: 'theirs' }, other.serviceRoleKey, otherBase))
        .status,
    ).toBe(200);
    const mine = await ok('ListVectorBuckets', {});
    expect(mine.vectorBuckets.map((b: { vectorBucketName: string }) => b.vectorBucketName)).not.toContain(
      'theirs',
    );
    await refused('GetVectorBucket', { vectorBucketName: 'theirs' }, 'NotFoundException', 404);
    const foreign = await call('ListVectorBuckets', {}, other.serviceRoleKey);
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('AccessDenied');
  });

  it('at most 10 vector buckets per project', async () => {
    for (let i = 1; i < 10; i++) {
      const r = await call(
        'CreateVectorBucket',
        { vectorBucketName: `b-${i}` },
        other.serviceRoleKey,
        otherBase,
      );
      expect(r.status).toBe(200);
    }
    const over = await call(
      'CreateVectorBucket',
      { vectorBucketName: 'b-10' },
      other.serviceRoleKey,
      otherBase,
    );
    expect(over.status).toBe(400);
    expect(over.body.code).toBe('S3VectorMaxBucketsExceeded');
    const taken = await call(
      'CreateVectorBucket',
      { vectorBucketName: 'b-1' },
      other.serviceRoleKey,
      otherBase,
    );
    expect(taken.status).toBe(409);
  });
});
