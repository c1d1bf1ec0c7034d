/**
 * Vector queries and limits (`/storage/v1/vector/*`): exact nearest neighbours (cosine and
 * Euclidean, ordered, with distances), metadata filters with upstream's operators and the
 * non-filterable keys, and the request limits (key length, key counts, dimension, zero vectors,
 * no type coercion, metadata sizes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStorage, type StorageHarness } from '../support/storage.js';
import { type VectorApi, vectorApi } from './vector-support.js';

let h: StorageHarness;
let v: VectorApi;
let svc: string;

beforeAll(async () => {
  h = await startStorage('file');
  v = vectorApi(h);
  svc = h.project.serviceRoleKey;
});
afterAll(async () => h?.close());

describe('vectors', () => {
  const B = 'vec-main';
  const at = (indexName: string) => ({ vectorBucketName: B, indexName });

  beforeAll(async () => {
    await v.ok('CreateVectorBucket', { vectorBucketName: B });
    const make = (indexName: string, distanceMetric: string, dimension: number, extra = {}) =>
      v.ok('CreateIndex', { ...at(indexName), dataType: 'float32', dimension, distanceMetric, ...extra });
    await make('cos', 'cosine', 2, {
      metadataConfiguration: { nonFilterableMetadataKeys: ['private-note'] },
    });
    await make('euc', 'euclidean', 2);
    await make('many', 'cosine', 2);
  });

  it('limits: key length, key counts, missing key, duplicates, dimension, zero vectors, types', async () => {
    const put = (vectors: unknown[], index = 'many') => v.call('PutVectors', { ...at(index), vectors });
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
    await v.refused('GetVectors', { ...at('many'), keys: keys(101) }, 'InvalidRequest');
    expect((await v.call('GetVectors', { ...at('many'), keys: keys(100) })).status).toBe(200);
    await v.refused('DeleteVectors', { ...at('many'), keys: keys(501) }, 'InvalidRequest');
    expect((await v.call('DeleteVectors', { ...at('many'), keys: keys(500) })).status).toBe(200);
    await v.refused('PutVectors', { ...at('many'), vectors: [] }, 'InvalidRequest');

    const dup = [
      { key: 'd', data: { float32: [1, 1] } },
      { key: 'd', data: { float32: [1, 2] } },
    ];
    expect(await v.refused('PutVectors', { ...at('many'), vectors: dup }, 'InvalidParameter')).toBe(
      'Request must not contain duplicate keys',
    );
    expect(
      await v.refused(
        'PutVectors',
        { ...at('many'), vectors: [{ key: 'w', data: { float32: [1, 2, 3] } }] },
        'InvalidParameter',
      ),
    ).toBe("Invalid vector for key 'w': dimension 3 does not match the index dimension 2");
    expect(
      await v.refused(
        'PutVectors',
        { ...at('many'), vectors: [{ key: 'z', data: { float32: [0, 0] } }] },
        'InvalidParameter',
      ),
    ).toMatch(/zero vector/);
    // The batch is all or nothing: a good vector before a bad one is not stored.
    await v.refused(
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
    expect((await v.ok('GetVectors', { ...at('many'), keys: ['good'] })).vectors).toEqual([]);
    // No coercion: a numeric string is not a number, a nested object is not metadata.
    await v.refused(
      'PutVectors',
      { ...at('many'), vectors: [{ key: 's', data: { float32: ['1', 1] } }] },
      'InvalidRequest',
    );
    await v.refused(
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
    await v.refused(
      'PutVectors',
      { ...at('many'), vectors: [{ key: 'm', data: { float32: [1, 1] }, metadata: wide }] },
      'InvalidParameter',
    );
    // 2 KiB of filterable metadata at most; a non-filterable key may hold more.
    const big = 'b'.repeat(3000);
    await v.refused(
      'PutVectors',
      { ...at('many'), vectors: [{ key: 'm', data: { float32: [1, 1] }, metadata: { big } }] },
      'InvalidParameter',
    );
    expect(
      (await put([{ key: 'm', data: { float32: [1, 1] }, metadata: { 'private-note': big } }], 'cos')).status,
    ).toBe(200);
    await v.ok('DeleteVectors', { ...at('cos'), keys: ['m'] });

    const query = (extra: object) => ({ ...at('many'), queryVector: { float32: [1, 1] }, topK: 1, ...extra });
    await v.refused('QueryVectors', query({ queryVector: { float32: [1, 1, 1] } }), 'InvalidParameter');
    await v.refused('QueryVectors', query({ queryVector: { float32: [0, 0] } }), 'InvalidParameter');
    await v.refused('QueryVectors', query({ topK: 101 }), 'InvalidRequest');
    await v.refused('QueryVectors', query({ topK: '1' }), 'InvalidRequest');
    await v.refused('QueryVectors', query({ surprise: true }), 'InvalidRequest');
  });

  it('cosine: nearest first, distance 1 - cos, returned only when asked', async () => {
    await v.ok('PutVectors', {
      ...at('cos'),
      vectors: [
        { key: 'east', data: { float32: [1, 0] } },
        { key: 'north-east', data: { float32: [3, 3] } },
        { key: 'north', data: { float32: [0, 2] } },
        { key: 'west', data: { float32: [-5, 0] } },
      ],
    });
    const r = await v.ok('QueryVectors', {
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
    const top2 = await v.ok('QueryVectors', { ...at('cos'), queryVector: { float32: [0, 1] }, topK: 2 });
    expect(top2.vectors).toEqual([{ key: 'north' }, { key: 'north-east' }]);
    await v.ok('DeleteVectors', { ...at('cos'), keys: ['east', 'north-east', 'north', 'west'] });
  });

  it('euclidean: true L2 distances, nearest first among distractors', async () => {
    const distractors = Array.from({ length: 30 }, (_, i) => ({
      key: `far-${i}`,
      data: { float32: [100 + i, -100 - i] },
    }));
    await v.ok('PutVectors', {
      ...at('euc'),
      vectors: [
        { key: 'origin', data: { float32: [0, 0] } },
        { key: 'near', data: { float32: [3, 4] } },
        { key: 'far', data: { float32: [8, 15] } },
        ...distractors,
      ],
    });
    const r = await v.ok('QueryVectors', {
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
      await v.ok('PutVectors', {
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
      const r = await v.ok('QueryVectors', {
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
        v.refused(
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
