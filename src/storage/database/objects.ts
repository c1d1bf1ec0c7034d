/** SQL on storage.objects rows: reads, deletes, listing. Each runs on the connection given. */
import type { Db } from './tx.js';

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

const OBJECT_COLUMNS =
  'id, bucket_id, name, owner, owner_id, version, metadata, user_metadata, created_at, updated_at, last_accessed_at';

export async function selectObject(db: Db, bucket: string, key: string): Promise<ObjectRow | undefined> {
  return (
    await db.query<ObjectRow>(
      `select ${OBJECT_COLUMNS} from storage.objects where bucket_id = $1 and name = $2`,
      [bucket, key],
    )
  ).rows[0];
}

/** The bucket's public flag and the object (`object_id` null when it is missing); undefined: no bucket. */
export async function selectObjectWithBucket(
  db: Db,
  bucket: string,
  key: string,
): Promise<(ObjectRow & { bucket_public: boolean | null; object_id: string | null }) | undefined> {
  return (
    await db.query<ObjectRow & { bucket_public: boolean | null; object_id: string | null }>(
      `select b.public as bucket_public, o.id as object_id, ${OBJECT_COLUMNS.split(', ')
        .map((c) => `o.${c}`)
        .join(', ')}
         from storage.buckets b left join storage.objects o on o.bucket_id = b.id and o.name = $2
         where b.id = $1`,
      [bucket, key],
    )
  ).rows[0];
}

/** The deleted row; undefined when there was none the role may delete. */
export async function deleteObjectRow(db: Db, bucket: string, key: string): Promise<ObjectRow | undefined> {
  return (
    await db.query<ObjectRow>(
      `delete from storage.objects where bucket_id = $1 and name = $2 returning ${OBJECT_COLUMNS}`,
      [bucket, key],
    )
  ).rows[0];
}

/** Deletes the named rows the role may delete; returns them. */
export async function deleteObjectRows(db: Db, bucket: string, names: string[]): Promise<ObjectRow[]> {
  return (
    await db.query<ObjectRow>(
      `delete from storage.objects where bucket_id = $1 and name = any($2::text[]) returning ${OBJECT_COLUMNS}`,
      [bucket, names],
    )
  ).rows;
}

/** How many objects the bucket holds, counted up to `upTo` (no further). */
export async function countObjectsUpTo(db: Db, bucket: string, upTo: number): Promise<number> {
  const [counted] = (
    await db.query<{ n: string }>(
      'select count(*) as n from (select 1 from storage.objects where bucket_id = $1 limit $2) s',
      [bucket, upTo],
    )
  ).rows;
  if (!counted) throw new Error('emptyBucket: the count query returned no row');
  return Number(counted.n);
}

/** Deletes every row of the bucket created up to now; returns them. */
export async function deleteBucketObjects(db: Db, bucket: string): Promise<ObjectRow[]> {
  return (
    await db.query<ObjectRow>(
      `delete from storage.objects where bucket_id = $1 and created_at <= now() returning ${OBJECT_COLUMNS}`,
      [bucket],
    )
  ).rows;
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

/** storage.search (security invoker: only the objects the role sees count). */
export async function searchObjects(db: Db, bucket: string, o: ListOptions): Promise<ListEntry[]> {
  return (
    await db.query<ListEntry>('select * from storage.search($1, $2, $3, 1, $4, $5, $6, $7)', [
      o.prefix,
      bucket,
      o.limit,
      o.offset,
      o.search,
      o.sortColumn,
      o.sortOrder,
    ])
  ).rows;
}

/** Which of `names` the role can SELECT. */
export async function selectVisibleNames(db: Db, bucket: string, names: string[]): Promise<string[]> {
  const rows = (
    await db.query<{ name: string }>(
      'select name from storage.objects where bucket_id = $1 and name = any($2::text[])',
      [bucket, names],
    )
  ).rows;
  return rows.map((r) => r.name);
}
