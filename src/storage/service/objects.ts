/** Object rows: reads, deletes, listing and visibility checks, under the caller's role. */
import type { ProjectContext } from '../../platform/project-context.js';
import { SERVICE, type Caller } from '../auth.js';
import { errors } from '../errors.js';
import { inTx, rowsInTx } from './tx.js';

/** System metadata (§1.7). */
export interface SystemMetadata {
  eTag: string;
  size: number;
  mimetype: string;
  cacheControl: string;
  lastModified: string;
  contentLength: number;
  httpStatusCode: number;
  xRobotsTag?: string;
}

export interface ObjectRow {
  id: string;
  bucket_id: string;
  name: string;
  owner: string | null;
  owner_id: string | null;
  version: string | null;
  metadata: SystemMetadata | null;
  user_metadata: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  last_accessed_at: Date;
}

export const OBJECT_COLUMNS =
  'id, bucket_id, name, owner, owner_id, version, metadata, user_metadata, created_at, updated_at, last_accessed_at';

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
  operation: string,
  bucket: string,
  key: string,
): Promise<ObjectRow | undefined> {
  return (
    await rowsInTx<ObjectRow>(
      project,
      caller,
      operation,
      `select ${OBJECT_COLUMNS} from storage.objects where bucket_id = $1 and name = $2`,
      [bucket, key],
    )
  )[0];
}

/**
 * Bucket and object in one read bypassing RLS (public reads and the service role): NoSuchBucket
 * when the bucket is missing; `row` undefined when the object is.
 */
export async function findWithBucket(
  project: ProjectContext,
  operation: string,
  bucket: string,
  key: string,
): Promise<{ isPublic: boolean; row?: ObjectRow }> {
  const r = (
    await rowsInTx<ObjectRow & { bucket_public: boolean | null; object_id: string | null }>(
      project,
      SERVICE,
      operation,
      `select b.public as bucket_public, o.id as object_id, ${OBJECT_COLUMNS.split(', ')
        .map((c) => `o.${c}`)
        .join(', ')}
         from storage.buckets b left join storage.objects o on o.bucket_id = b.id and o.name = $2
         where b.id = $1`,
      [bucket, key],
    )
  )[0];
  if (!r) throw errors.noSuchBucket();
  const { bucket_public, object_id, ...row } = r;
  return { isPublic: bucket_public === true, row: object_id ? (row as ObjectRow) : undefined };
}

export async function requireObject(
  project: ProjectContext,
  caller: Caller,
  operation: string,
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
  if (!(await findObject(project, SERVICE, 'storage.object.delete', bucket, key))) throw errors.noSuchKey();
  const row = (
    await rowsInTx<ObjectRow>(
      project,
      caller,
      'storage.object.delete',
      `delete from storage.objects where bucket_id = $1 and name = $2 returning ${OBJECT_COLUMNS}`,
      [bucket, key],
    )
  )[0];
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
  return rowsInTx<ObjectRow>(
    project,
    caller,
    'storage.object.delete_many',
    `delete from storage.objects where bucket_id = $1 and name = any($2::text[]) returning ${OBJECT_COLUMNS}`,
    [bucket, names],
  );
}

/** S3: removes every row created before now (service role only); returns the removed rows. */
export async function emptyBucket(
  project: ProjectContext,
  caller: Caller,
  bucket: string,
  max: number,
): Promise<ObjectRow[]> {
  return inTx(project, caller, 'storage.bucket.empty', async (db) => {
    const exists = await db.query('select 1 from storage.buckets where id = $1', [bucket]);
    if (!exists.rowCount) throw errors.noSuchBucket();
    const count = await db.query<{ n: string }>(
      'select count(*) as n from (select 1 from storage.objects where bucket_id = $1 limit $2) s',
      [bucket, max + 1],
    );
    const [counted] = count.rows;
    if (!counted) throw new Error('emptyBucket: the count query returned no row');
    if (Number(counted.n) > max) {
      throw errors.tooManyObjectsToEmpty();
    }
    return (
      await db.query<ObjectRow>(
        `delete from storage.objects where bucket_id = $1 and created_at <= now() returning ${OBJECT_COLUMNS}`,
        [bucket],
      )
    ).rows;
  });
}

export interface ListOptions {
  prefix: string;
  limit: number;
  offset: number;
  sortColumn: string;
  sortOrder: string;
  search: string;
}

export interface ListEntry {
  name: string;
  id: string | null;
  updated_at: Date | null;
  created_at: Date | null;
  last_accessed_at: Date | null;
  metadata: SystemMetadata | null;
}

/** S17 through storage.search (security invoker: only visible objects count). */
export async function listObjects(
  project: ProjectContext,
  caller: Caller,
  bucket: string,
  o: ListOptions,
): Promise<ListEntry[]> {
  return rowsInTx<ListEntry>(
    project,
    caller,
    'storage.object.list',
    'select * from storage.search($1, $2, $3, 1, $4, $5, $6, $7)',
    [o.prefix, bucket, o.limit, o.offset, o.search, o.sortColumn, o.sortOrder],
  );
}

/** Which of `names` the caller can SELECT (signing). */
export async function visibleNames(
  project: ProjectContext,
  caller: Caller,
  operation: string,
  bucket: string,
  names: string[],
): Promise<Set<string>> {
  const rows = await rowsInTx<{ name: string }>(
    project,
    caller,
    operation,
    'select name from storage.objects where bucket_id = $1 and name = any($2::text[])',
    [bucket, names],
  );
  return new Set(rows.map((r) => r.name));
}
