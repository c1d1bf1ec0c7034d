/** Object rows: reads, deletes, listing and visibility checks, under the caller's role. */
import type { ProjectContext } from '../../platform/project-context.js';
import { SERVICE, type Caller } from '../auth.js';
import {
  bucketExists,
  countObjectsUpTo,
  deleteBucketObjects,
  deleteObjectRow,
  deleteObjectRows,
  inTx,
  type ListEntry,
  type ListOptions,
  type ObjectRow,
  searchObjects,
  selectObject,
  selectObjectWithBucket,
  selectVisibleNames,
} from '../database/index.js';
import { errors } from '../errors.js';
import { OPERATIONS, type Operation } from '../operations.js';

/** The row shape of delete/copy replies: NULL strings as "". */
export function objectJson(r: ObjectRow): Record<string, unknown> {
  return {
    name: r.name,
    bucket_id: r.bucket_id,
    owner: r.owner ?? '',
    owner_id: r.owner_id ?? '',
    version: r.version ?? '',
    id: r.id,
    updated_at: r.updated_at,
    created_at: r.created_at,
    last_accessed_at: r.last_accessed_at,
    metadata: r.metadata,
    user_metadata: r.user_metadata,
  };
}

/** One object as `caller` sees it (SERVICE for the bypassing reads). */
export async function findObject(
  project: ProjectContext,
  caller: Caller,
  operation: Operation,
  bucket: string,
  key: string,
): Promise<ObjectRow | undefined> {
  return inTx(project, caller, operation, (db) => selectObject(db, bucket, key));
}

/**
 * Bucket and object in one read bypassing RLS (public reads and the service role): NoSuchBucket
 * when the bucket is missing; `row` undefined when the object is.
 */
export async function findWithBucket(
  project: ProjectContext,
  operation: Operation,
  bucket: string,
  key: string,
): Promise<{ isPublic: boolean; row?: ObjectRow }> {
  const r = await inTx(project, SERVICE, operation, (db) => selectObjectWithBucket(db, bucket, key));
  if (!r) throw errors.noSuchBucket();
  const { bucket_public, object_id, ...row } = r;
  return { isPublic: bucket_public === true, row: object_id ? (row as ObjectRow) : undefined };
}

export async function requireObject(
  project: ProjectContext,
  caller: Caller,
  operation: Operation,
  bucket: string,
  key: string,
): Promise<ObjectRow> {
  const row = await findObject(project, caller, operation, bucket, key);
  if (!row) throw errors.noSuchKey();
  return row;
}

/** S7: the row must exist (bypassing RLS); the DELETE must be allowed (else 403 Access denied). */
export async function deleteObject(
  project: ProjectContext,
  caller: Caller,
  bucket: string,
  key: string,
): Promise<ObjectRow> {
  if (!(await findObject(project, SERVICE, OPERATIONS.DELETE_OBJECT, bucket, key))) throw errors.noSuchKey();
  const row = await inTx(project, caller, OPERATIONS.DELETE_OBJECT, (db) => deleteObjectRow(db, bucket, key));
  if (!row) throw errors.accessDenied('Access denied');
  return row;
}

/** S11: exact names; what RLS hides or what is missing is skipped. */
export async function deleteObjects(
  project: ProjectContext,
  caller: Caller,
  bucket: string,
  names: string[],
): Promise<ObjectRow[]> {
  return inTx(project, caller, OPERATIONS.DELETE_OBJECTS, (db) => deleteObjectRows(db, bucket, names));
}

/** S3: removes every row created before now (service role only); returns the removed rows. */
export async function emptyBucket(
  project: ProjectContext,
  caller: Caller,
  bucket: string,
  max: number,
): Promise<ObjectRow[]> {
  return inTx(project, caller, OPERATIONS.EMPTY_BUCKET, async (db) => {
    if (!(await bucketExists(db, bucket))) throw errors.noSuchBucket();
    if ((await countObjectsUpTo(db, bucket, max + 1)) > max) {
      throw errors.tooManyObjectsToEmpty();
    }
    return deleteBucketObjects(db, bucket);
  });
}

/** S17 through storage.search (security invoker: only visible objects count). */
export async function listObjects(
  project: ProjectContext,
  caller: Caller,
  bucket: string,
  o: ListOptions,
): Promise<ListEntry[]> {
  return inTx(project, caller, OPERATIONS.LIST_OBJECTS, (db) => searchObjects(db, bucket, o));
}

/** Which of `names` the caller can SELECT (signing). */
export async function visibleNames(
  project: ProjectContext,
  caller: Caller,
  operation: Operation,
  bucket: string,
  names: string[],
): Promise<Set<string>> {
  return new Set(await inTx(project, caller, operation, (db) => selectVisibleNames(db, bucket, names)));
}
