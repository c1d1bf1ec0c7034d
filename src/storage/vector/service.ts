/**
 * The vector operations behind `/vector/*`: each one transaction as the caller (the service role;
 * routes.ts refuses any other) on the project's database, SQL in src/storage/database/vectors.ts.
 * Replies are upstream's JSON: times in epoch seconds, `nextToken` the last name or key of a page
 * that has more after it.
 */
import type { Static } from '@sinclair/typebox';
import type { ProjectContext } from '../../platform/project-context.js';
import type { Caller } from '../auth.js';
import * as sql from '../database/vectors.js';
import { type Db, inTx } from '../database/index.js';
import { OPERATIONS, type Operation } from '../operations.js';
import { vectorErrors } from './errors.js';
import { parseFilter } from './filter.js';
import {
  type CreateIndexBody,
  type DeleteVectorsBody,
  type GetVectorsBody,
  type ListBucketsBody,
  type ListIndexesBody,
  type ListVectorsInput,
  LIMITS,
  type PutVectorsInput,
  type QueryVectorsInput,
  checkDistinctKeys,
  checkMetadata,
  l2norm,
  nonFilterableKeys,
  segmentOf,
  toFloat32,
} from './validation.js';

export interface VectorScope {
  project: ProjectContext;
  caller: Caller;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

function run<T>(scope: VectorScope, operation: Operation, work: (db: Db) => Promise<T>): Promise<T> {
  return inTx(scope.project, scope.caller, operation, work);
}

/** The first `limit` rows and the token of the next page (when one more row was read). */
function page<R>(rows: R[], limit: number, tokenOf: (row: R) => string): { rows: R[]; nextToken?: string } {
  const shown = rows.slice(0, limit);
  const last = shown[shown.length - 1];
  return rows.length > limit && last !== undefined
    ? { rows: shown, nextToken: tokenOf(last) }
    : { rows: shown };
}

async function indexOf(db: Db, bucket: string, name: string, lock?: 'share' | 'update') {
  const index = await sql.findIndex(db, bucket, name, lock);
  if (!index) throw vectorErrors.notFound(name);
  return index;
}

async function bucketOf(db: Db, name: string, forUpdate = false) {
  const bucket = await sql.findBucket(db, name, forUpdate);
  if (!bucket) throw vectorErrors.notFound(name);
  return bucket;
}

export function createBucket(scope: VectorScope, name: string): Promise<void> {
  return run(scope, OPERATIONS.CREATE_VECTOR_BUCKET, async (db) => {
    await sql.lockBucketCreation(db);
    if (await sql.findBucket(db, name)) throw vectorErrors.conflict('vector bucket', name);
    if ((await sql.countBuckets(db)) >= LIMITS.buckets) throw vectorErrors.maxBuckets(LIMITS.buckets);
    if (!(await sql.insertBucket(db, name))) throw vectorErrors.conflict('vector bucket', name);
  });
}

export function getBucket(scope: VectorScope, name: string) {
  return run(scope, OPERATIONS.GET_VECTOR_BUCKET, async (db) => {
    const bucket = await bucketOf(db, name);
    return { vectorBucket: { vectorBucketName: bucket.id, creationTime: seconds(bucket.created_at) } };
  });
}

export function listBuckets(scope: VectorScope, body: Static<typeof ListBucketsBody>) {
  const limit = body.maxResults ?? LIMITS.listPage;
  return run(scope, OPERATIONS.LIST_VECTOR_BUCKETS, async (db) => {
    const rows = await sql.listBuckets(db, { prefix: body.prefix, after: body.nextToken, limit: limit + 1 });
    const p = page(rows, limit, (b) => b.id);
    return {
      vectorBuckets: p.rows.map((b) => ({ vectorBucketName: b.id, creationTime: seconds(b.created_at) })),
      nextToken: p.nextToken,
    };
  });
}

/** Only an empty bucket (no index left) is deleted. */
export function deleteBucket(scope: VectorScope, name: string): Promise<void> {
  return run(scope, OPERATIONS.DELETE_VECTOR_BUCKET, async (db) => {
    await bucketOf(db, name, true);
    if (await sql.bucketHasIndexes(db, name)) throw vectorErrors.bucketNotEmpty(name);
    await sql.deleteBucket(db, name);
  });
}

export function createIndex(scope: VectorScope, body: Static<typeof CreateIndexBody>): Promise<void> {
  return run(scope, OPERATIONS.CREATE_VECTOR_INDEX, async (db) => {
    // The bucket's row lock serialises index creation in it (the count) and keeps it from being deleted.
    await bucketOf(db, body.vectorBucketName, true);
    if (await sql.findIndex(db, body.vectorBucketName, body.indexName)) {
      throw vectorErrors.conflict('vector index', body.indexName);
    }
    if ((await sql.countIndexes(db, body.vectorBucketName)) >= LIMITS.indexesPerBucket) {
      throw vectorErrors.maxIndexes(LIMITS.indexesPerBucket);
    }
    const created = await sql.insertIndex(db, {
      bucket: body.vectorBucketName,
      name: body.indexName,
      dataType: body.dataType,
      dimension: body.dimension,
      metric: body.distanceMetric,
      // Only what is known of it is kept (the schema lets other keys through, as upstream's does).
      metadataConfiguration: body.metadataConfiguration && {
        nonFilterableMetadataKeys: body.metadataConfiguration.nonFilterableMetadataKeys,
      },
    });
    if (!created) throw vectorErrors.conflict('vector index', body.indexName);
  });
}

export function getIndex(scope: VectorScope, bucket: string, name: string) {
  return run(scope, OPERATIONS.GET_VECTOR_INDEX, async (db) => {
    const index = await indexOf(db, bucket, name);
    return {
      index: {
        indexName: index.name,
        vectorBucketName: index.bucket_id,
        dataType: index.data_type,
        dimension: index.dimension,
        distanceMetric: index.distance_metric,
        metadataConfiguration: index.metadata_configuration,
        creationTime: seconds(index.created_at),
      },
    };
  });
}

export function listIndexes(scope: VectorScope, body: Static<typeof ListIndexesBody>) {
  const limit = body.maxResults ?? LIMITS.listPage;
  return run(scope, OPERATIONS.LIST_VECTOR_INDEXES, async (db) => {
    await bucketOf(db, body.vectorBucketName);
    const rows = await sql.listIndexes(db, body.vectorBucketName, {
      prefix: body.prefix,
      after: body.nextToken,
      limit: limit + 1,
    });
    const p = page(rows, limit, (i) => i.name);
    return {
      indexes: p.rows.map((i) => ({
        indexName: i.name,
        vectorBucketName: i.bucket_id,
        creationTime: seconds(i.created_at),
      })),
      nextToken: p.nextToken,
    };
  });
}

/** The index and its vectors. */
export function deleteIndex(scope: VectorScope, bucket: string, name: string): Promise<void> {
  return run(scope, OPERATIONS.DELETE_VECTOR_INDEX, async (db) => {
    const index = await indexOf(db, bucket, name, 'update');
    await sql.deleteIndex(db, index.id);
  });
}

/** Inserts or replaces the vectors, all or none. */
export function putVectors(scope: VectorScope, body: PutVectorsInput): Promise<void> {
  checkDistinctKeys(body.vectors);
  return run(scope, OPERATIONS.PUT_VECTORS, async (db) => {
    const index = await indexOf(db, body.vectorBucketName, body.indexName, 'share');
    const nonFilterable = nonFilterableKeys(index.metadata_configuration);
    const target = { dimension: index.dimension, metric: index.distance_metric };
    const vectors = body.vectors.map((v) => {
      const metadata = v.metadata ?? {};
      checkMetadata(v.key, metadata, nonFilterable);
      const data = toFloat32(v.data.float32, target, `key '${v.key}'`);
      return { key: v.key, data, norm: l2norm(data), metadata };
    });
    await sql.upsertVectors(db, index.id, vectors);
  });
}

type VectorReply = { key: string; data?: { float32: number[] }; metadata?: Record<string, unknown> };

function vectorReply(row: sql.VectorRow, want: { data?: boolean; metadata?: boolean }): VectorReply {
  return {
    key: row.key,
    ...(want.data ? { data: { float32: row.data ?? [] } } : {}),
    ...(want.metadata ? { metadata: row.metadata ?? {} } : {}),
  };
}

export function getVectors(scope: VectorScope, body: Static<typeof GetVectorsBody>) {
  const want = { data: body.returnData === true, metadata: body.returnMetadata === true };
  return run(scope, OPERATIONS.GET_VECTORS, async (db) => {
    const index = await indexOf(db, body.vectorBucketName, body.indexName);
    const rows = await sql.getVectors(db, index.id, body.keys, want);
    return { vectors: rows.map((r) => vectorReply(r, want)) };
  });
}

export function listVectors(scope: VectorScope, body: ListVectorsInput) {
  const segment = segmentOf(body);
  const limit = body.maxResults ?? LIMITS.listPage;
  const want = { data: body.returnData === true, metadata: body.returnMetadata === true };
  return run(scope, OPERATIONS.LIST_VECTORS, async (db) => {
    const index = await indexOf(db, body.vectorBucketName, body.indexName);
    const rows = await sql.listVectors(db, index.id, {
      ...want,
      after: body.nextToken,
      limit: limit + 1,
      segment,
    });
    const p = page(rows, limit, (r) => r.key);
    return { vectors: p.rows.map((r) => vectorReply(r, want)), nextToken: p.nextToken };
  });
}

/** The topK nearest vectors (exact: every vector of the index is compared), nearest first. */
export function queryVectors(scope: VectorScope, body: QueryVectorsInput) {
  return run(scope, OPERATIONS.QUERY_VECTORS, async (db) => {
    const index = await indexOf(db, body.vectorBucketName, body.indexName);
    const filter =
      body.filter === undefined
        ? undefined
        : parseFilter(body.filter, nonFilterableKeys(index.metadata_configuration));
    const target = { dimension: index.dimension, metric: index.distance_metric };
    const rows = await sql.nearestVectors(db, {
      indexId: index.id,
      metric: index.distance_metric,
      vector: toFloat32(body.queryVector.float32, target, 'queryVector'),
      topK: body.topK,
      filter,
      metadata: body.returnMetadata === true,
    });
    return {
      vectors: rows.map((r) => ({
        key: r.key,
        ...(body.returnDistance === true ? { distance: r.distance } : {}),
        ...(body.returnMetadata === true ? { metadata: r.metadata ?? {} } : {}),
      })),
      distanceMetric: index.distance_metric,
    };
  });
}

export function deleteVectors(scope: VectorScope, body: Static<typeof DeleteVectorsBody>): Promise<void> {
  return run(scope, OPERATIONS.DELETE_VECTORS, async (db) => {
    const index = await indexOf(db, body.vectorBucketName, body.indexName, 'share');
    await sql.deleteVectors(db, index.id, body.keys);
  });
}
