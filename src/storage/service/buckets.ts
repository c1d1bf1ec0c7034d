/** Buckets: storage.buckets under the caller's role (RLS decides), as in spec S1–S6. */
import type { ProjectContext } from '../../platform/project-context.js';
import { SERVICE, ownerUuid, type Caller } from '../auth.js';
import {
  type BucketChanges,
  type BucketRow,
  bucketState,
  deleteBucketRow,
  inTx,
  insertBucket,
  type ListBucketsQuery,
  selectBucket,
  selectBucketWithKey,
  selectBuckets,
  updateBucketRow,
} from '../database/index.js';
import { errors } from '../errors.js';
import { OPERATIONS } from '../operations.js';

/** What the upload pipeline needs of a bucket. */
export interface BucketLimits {
  id: string;
  public: boolean;
  fileSizeLimit: number | null;
  allowedMimeTypes: string[] | null;
}

/** The reply shape of list/get: a NULL owner is "", the limit a number. */
export function bucketJson(b: BucketRow, withType: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: b.id,
    name: b.name,
    owner: b.owner ?? '',
    public: b.public ?? false,
  };
  if (withType) out.type = b.type;
  out.file_size_limit = b.file_size_limit === null ? null : Number(b.file_size_limit);
  out.allowed_mime_types = b.allowed_mime_types;
  out.created_at = b.created_at;
  out.updated_at = b.updated_at;
  return out;
}

export interface NewBucket {
  id: string;
  name: string;
  public: boolean;
  fileSizeLimit: number | null;
  allowedMimeTypes: string[] | null;
}

export async function createBucket(project: ProjectContext, caller: Caller, b: NewBucket): Promise<void> {
  await inTx(
    project,
    caller,
    OPERATIONS.CREATE_BUCKET,
    (db) => insertBucket(db, { ...b, owner: ownerUuid(caller), ownerId: caller.sub ?? null }),
    { '23505': errors.bucketAlreadyExists },
  );
}

export async function listBuckets(
  project: ProjectContext,
  caller: Caller,
  q: ListBucketsQuery,
): Promise<BucketRow[]> {
  return inTx(project, caller, OPERATIONS.LIST_BUCKET, (db) => selectBuckets(db, q));
}

export async function getBucket(project: ProjectContext, caller: Caller, id: string): Promise<BucketRow> {
  const row = await inTx(project, caller, OPERATIONS.GET_BUCKET, (db) => selectBucket(db, id));
  if (!row) throw errors.noSuchBucket();
  return row;
}

/**
 * The bucket's limits, read bypassing RLS (upload pipeline step 2). With `key`, also whether that
 * object exists (so the service role, which RLS does not restrict, needs no dry run).
 */
export async function bucketLimits(
  project: ProjectContext,
  id: string,
  key?: string,
): Promise<BucketLimits & { keyExists: boolean }> {
  const row = await inTx(project, SERVICE, OPERATIONS.GET_BUCKET, (db) =>
    selectBucketWithKey(db, id, key ?? null),
  );
  if (!row) throw errors.noSuchBucket();
  return {
    keyExists: row.key_exists,
    id: row.id,
    public: row.public === true,
    fileSizeLimit: row.file_size_limit === null ? null : Number(row.file_size_limit),
    allowedMimeTypes: row.allowed_mime_types,
  };
}

export async function updateBucket(
  project: ProjectContext,
  caller: Caller,
  id: string,
  c: BucketChanges,
): Promise<void> {
  const n = await inTx(project, caller, OPERATIONS.UPDATE_BUCKET, (db) => updateBucketRow(db, id, c));
  if (!n) throw errors.noSuchBucket();
}

/** Existence and emptiness bypassing RLS; the DELETE itself under RLS. */
export async function deleteBucket(project: ProjectContext, caller: Caller, id: string): Promise<void> {
  const state = await inTx(project, SERVICE, OPERATIONS.DELETE_BUCKET, (db) => bucketState(db, id));
  if (!state.exists) throw errors.noSuchBucket();
  if (state.has_objects) throw errors.bucketNotEmpty();
  // 23503: an object was added between the check and the delete.
  const n = await inTx(project, caller, OPERATIONS.DELETE_BUCKET, (db) => deleteBucketRow(db, id), {
    '23503': errors.bucketNotEmpty,
  });
  if (!n) throw errors.noSuchBucket();
}
