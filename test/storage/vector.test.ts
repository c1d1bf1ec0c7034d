/**
 * Vector buckets (`POST /storage/v1/vector/<Operation>`, upstream's S3 Vectors-shaped routes):
 * bucket and index lifecycle, storage-js's client, vectors put/get/replace/delete, paging and
 * segments, the service-role-only guard, and one project's vector buckets out of another's sight.
 * Limits and queries (k-NN, filters): vector-query.test.ts.
 */
import { StorageVectorsClient } from '@supabase/storage-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProjectContext } from '../../src/platform/project-context.js';
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

describe('vector buckets and indexes', () => {
  it('create, get, list by pages, delete; names are unique; a bucket with indexes is not deleted', async () => {
    await v.ok('CreateVectorBucket', { vectorBucketName: 'life-a' });
    await v.ok('CreateVectorBucket', { vectorBucketName: 'life-b' });
    await v.ok('CreateVectorBucket', { vectorBucketName: 'other-c' });
    expect(
      await v.refused('CreateVectorBucket', { vectorBucketName: 'life-a' }, 'ConflictException', 409),
    ).toBe('vector bucket "life-a" already exists');

    const first = await v.ok('ListVectorBuckets', { prefix: 'life-', maxResults: 1 });
    expect(first.vectorBuckets).toEqual([{ vectorBucketName: 'life-a', creationTime: expect.any(Number) }]);
    expect(first.nextToken).toBeTruthy();
    const second = await v.ok('ListVectorBuckets', {
      prefix: 'life-',
      maxResults: 1,
      nextToken: first.nextToken,
    });
    expect(second.vectorBuckets.map((b: { vectorBucketName: string }) => b.vectorBucketName)).toEqual([
      'life-b',
    ]);
    expect(second.nextToken).toBeUndefined();

    const got = await v.ok('GetVectorBucket', { vectorBucketName: 'life-a' });
    expect(got.vectorBucket.vectorBucketName).toBe('life-a');
    expect(Math.abs(got.vectorBucket.creationTime - Date.now() / 1000)).toBeLessThan(120);
    expect(await v.refused('GetVectorBucket', { vectorBucketName: 'nope' }, 'NotFoundException', 404)).toBe(
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
    await v.ok(
      'CreateIndex',
      index('idx-one', { metadataConfiguration: { nonFilterableMetadataKeys: ['note'] } }),
    );
    await v.ok('CreateIndex', index('idx-two', { distanceMetric: 'euclidean' }));
    await v.ok('CreateIndex', index('zzz-three'));
    await v.refused('CreateIndex', index('idx-one'), 'ConflictException', 409);
    await v.refused('CreateIndex', { ...index('idx-x'), vectorBucketName: 'nope' }, 'NotFoundException', 404);
    await v.refused('CreateIndex', index('Bad_Name'), 'InvalidRequest');
    await v.refused('CreateIndex', index('idx-x', { dimension: 4097 }), 'InvalidRequest');
    await v.refused('CreateIndex', index('idx-x', { distanceMetric: 'dot' }), 'InvalidRequest');

    const got1 = await v.ok('GetIndex', { vectorBucketName: 'life-a', indexName: 'idx-one' });
    expect(got1.index).toEqual({
      indexName: 'idx-one',
      vectorBucketName: 'life-a',
      dataType: 'float32',
      dimension: 3,
      distanceMetric: 'cosine',
      metadataConfiguration: { nonFilterableMetadataKeys: ['note'] },
      creationTime: expect.any(Number),
    });
    await v.refused(
      'GetIndex',
      { vectorBucketName: 'life-a', indexName: 'idx-nope' },
      'NotFoundException',
      404,
    );

    const p1 = await v.ok('ListIndexes', { vectorBucketName: 'life-a', prefix: 'idx-', maxResults: 1 });
    expect(p1.indexes.map((i: { indexName: string }) => i.indexName)).toEqual(['idx-one']);
    const p2 = await v.ok('ListIndexes', {
      vectorBucketName: 'life-a',
      prefix: 'idx-',
      maxResults: 1,
      nextToken: p1.nextToken,
    });
    expect(p2.indexes).toEqual([
      { indexName: 'idx-two', vectorBucketName: 'life-a', creationTime: expect.any(Number) },
    ]);
    expect(p2.nextToken).toBeUndefined();
    expect((await v.ok('ListIndexes', { vectorBucketName: 'life-a' })).indexes).toHaveLength(3);

    expect(
      await v.refused('DeleteVectorBucket', { vectorBucketName: 'life-a' }, 'VectorBucketNotEmpty'),
    ).toBe('Vector Bucket "life-a" not empty');
    for (const indexName of ['idx-one', 'idx-two', 'zzz-three']) {
      await v.ok('DeleteIndex', { vectorBucketName: 'life-a', indexName });
    }
    await v.refused(
      'DeleteIndex',
      { vectorBucketName: 'life-a', indexName: 'idx-one' },
      'NotFoundException',
      404,
    );
    for (const name of ['life-a', 'life-b', 'other-c'])
      await v.ok('DeleteVectorBucket', { vectorBucketName: name });
    await v.refused('GetVectorBucket', { vectorBucketName: 'life-a' }, 'NotFoundException', 404);
    await v.refused('DeleteVectorBucket', { vectorBucketName: 'life-a' }, 'NotFoundException', 404);
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
    await v.ok('CreateVectorBucket', { vectorBucketName: B });
    const make = (indexName: string, distanceMetric: string, dimension: number, extra = {}) =>
      v.ok('CreateIndex', { ...at(indexName), dataType: 'float32', dimension, distanceMetric, ...extra });
    await make('cos', 'cosine', 2, {
      metadataConfiguration: { nonFilterableMetadataKeys: ['private-note'] },
    });
    await make('many', 'cosine', 2);
  });

  it('put, get (data and metadata on request), replace, delete', async () => {
    await v.ok('PutVectors', {
      ...at('cos'),
      vectors: [
        { key: 'a', data: { float32: [1, 0] }, metadata: { group: 'g', score: 0.75, tags: ['x', 'y'] } },
        { key: 'b', data: { float32: [0.1, 1] } },
      ],
    });
    const full = await v.ok('GetVectors', {
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
    expect((await v.ok('GetVectors', { ...at('cos'), keys: ['a'] })).vectors).toEqual([{ key: 'a' }]);

    await v.ok('PutVectors', {
      ...at('cos'),
      vectors: [{ key: 'a', data: { float32: [2, 2] }, metadata: { v: 2 } }],
    });
    const replaced = await v.ok('GetVectors', {
      ...at('cos'),
      keys: ['a'],
      returnData: true,
      returnMetadata: true,
    });
    expect(replaced.vectors).toEqual([{ key: 'a', data: { float32: [2, 2] }, metadata: { v: 2 } }]);

    await v.ok('DeleteVectors', { ...at('cos'), keys: ['a', 'b', 'never-there'] });
    expect((await v.ok('GetVectors', { ...at('cos'), keys: ['a', 'b'] })).vectors).toEqual([]);
    await v.refused(
      'PutVectors',
      { ...at('nope'), vectors: [{ key: 'k', data: { float32: [1, 1] } }] },
      'NotFoundException',
      404,
    );
  });

  it('lists by pages (nextToken) and by disjoint segments', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `k-${String(i).padStart(2, '0')}`);
    await v.ok('PutVectors', {
      ...at('many'),
      vectors: keys.map((key, i) => ({ key, data: { float32: [i + 1, 1] } })),
    });

    const all = await v.ok('ListVectors', at('many'));
    expect(all.vectors.map((v: { key: string }) => v.key)).toEqual(keys);
    expect(all.nextToken).toBeUndefined();

    const seen: string[] = [];
    let nextToken: string | undefined;
    do {
      const p = await v.ok('ListVectors', { ...at('many'), maxResults: 15, nextToken, returnData: true });
      expect(p.vectors.length).toBeLessThanOrEqual(15);
      for (const v of p.vectors) {
        expect(v.data.float32).toHaveLength(2);
        seen.push(v.key);
      }
      nextToken = p.nextToken;
    } while (nextToken);
    expect(seen).toEqual(keys);

    const segments = await Promise.all(
      [0, 1, 2].map((segmentIndex) => v.ok('ListVectors', { ...at('many'), segmentCount: 3, segmentIndex })),
    );
    const bySegment = segments.flatMap((s) => s.vectors.map((v: { key: string }) => v.key));
    expect(bySegment.sort()).toEqual(keys);
    expect(segments.filter((s) => s.vectors.length > 0).length).toBeGreaterThan(1);

    expect(await v.refused('ListVectors', { ...at('many'), segmentIndex: 0 }, 'InvalidParameter')).toBe(
      'segmentCount and segmentIndex must be provided together',
    );
    await v.refused('ListVectors', { ...at('many'), segmentCount: 2, segmentIndex: 2 }, 'InvalidParameter');
    await v.refused('ListVectors', { ...at('many'), segmentCount: 17, segmentIndex: 0 }, 'InvalidRequest');
    await v.refused('ListVectors', { ...at('many'), maxResults: 1001 }, 'InvalidRequest');
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
      const r = await v.call('CreateVectorBucket', body, token);
      expect(r.status).toBe(403);
      expect(r.body).toEqual(denied('Access denied: Invalid role'));
    }
    const none = await v.call('ListVectorBuckets', {}, null);
    expect(none.status).toBe(403);
    expect(none.body.code).toBe('AccessDenied');
    const forged = await v.call('ListVectorBuckets', {}, `${svc.slice(0, -4)}AAAA`);
    expect(forged.status).toBe(403);
    expect(forged.body.code).toBe('AccessDenied');
    await v.refused('GetVectorBucket', body, 'NotFoundException', 404);
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
      (await v.call('CreateVectorBucket', { vectorBucketName: 'theirs' }, other.serviceRoleKey, otherBase))
        .status,
    ).toBe(200);
    const mine = await v.ok('ListVectorBuckets', {});
    expect(mine.vectorBuckets.map((b: { vectorBucketName: string }) => b.vectorBucketName)).not.toContain(
      'theirs',
    );
    await v.refused('GetVectorBucket', { vectorBucketName: 'theirs' }, 'NotFoundException', 404);
    const foreign = await v.call('ListVectorBuckets', {}, other.serviceRoleKey);
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('AccessDenied');
  });

  it('at most 10 vector buckets per project', async () => {
    for (let i = 1; i < 10; i++) {
      const r = await v.call(
        'CreateVectorBucket',
        { vectorBucketName: `b-${i}` },
        other.serviceRoleKey,
        otherBase,
      );
      expect(r.status).toBe(200);
    }
    const over = await v.call(
      'CreateVectorBucket',
      { vectorBucketName: 'b-10' },
      other.serviceRoleKey,
      otherBase,
    );
    expect(over.status).toBe(400);
    expect(over.body.code).toBe('S3VectorMaxBucketsExceeded');
    const taken = await v.call(
      'CreateVectorBucket',
      { vectorBucketName: 'b-1' },
      other.serviceRoleKey,
      otherBase,
    );
    expect(taken.status).toBe(409);
  });
});
