/** SQL on storage.buckets. Each function runs on the connection it is given (RLS as its role). */
import type { Db } from './tx.js';

export interface BucketRow {
  id: string;
  name: string;
  owner: string | null;
  owner_id: string | null;
  public: boolean | null;
  type: string;
  file_size_limit: string | null;
  allowed_mime_types: string[] | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  'id, name, owner, owner_id, public, type, file_size_limit, allowed_mime_types, created_at, updated_at';

export interface BucketInsert {
  id: string;
  name: string;
  owner: string | null;
  ownerId: string | null;
  public: boolean;
  fileSizeLimit: number | null;
  allowedMimeTypes: string[] | null;
}

export async function insertBucket(db: Db, b: BucketInsert): Promise<void> {
  await db.query(
    `insert into storage.buckets (id, name, owner, owner_id, public, file_size_limit, allowed_mime_types, type)
         values ($1, $2, $3, $4, $5, $6, $7, 'STANDARD')`,
    [b.id, b.name, b.owner, b.ownerId, b.public, b.fileSizeLimit, b.allowedMimeTypes],
  );
}

export interface ListBucketsQuery {
  limit?: number;
  offset?: number;
  search?: string;
  sortColumn?: 'id' | 'name' | 'created_at' | 'updated_at';
  sortOrder?: 'asc' | 'desc';
}

export async function selectBuckets(db: Db, q: ListBucketsQuery): Promise<BucketRow[]> {
  const params: unknown[] = [];
  let sql = `select ${COLUMNS} from storage.buckets`;
  if (q.search) {
    params.push(q.search);
    sql += ` where strpos(lower(name), lower($${params.length})) > 0`;
  }
  if (q.sortColumn) sql += ` order by "${q.sortColumn}" ${q.sortOrder === 'desc' ? 'desc' : 'asc'}`;
  if (q.limit !== undefined) {
    params.push(q.limit);
    sql += ` limit $${params.length}`;
  }
  if (q.offset !== undefined) {
    params.push(q.offset);
    sql += ` offset $${params.length}`;
  }
  return (await db.query<BucketRow>(sql, params)).rows;
}

export async function selectBucket(db: Db, id: string): Promise<BucketRow | undefined> {
  return (await db.query<BucketRow>(`select ${COLUMNS} from storage.buckets where id = $1`, [id])).rows[0];
}

/** The bucket, and whether `key` (when given) names one of its objects. */
export async function selectBucketWithKey(
  db: Db,
  id: string,
  key: string | null,
): Promise<(BucketRow & { key_exists: boolean }) | undefined> {
  return (
    await db.query<BucketRow & { key_exists: boolean }>(
      `select ${COLUMNS}, exists (select 1 from storage.objects where bucket_id = $1 and name = $2) as key_exists from storage.buckets where id = $1`,
      [id, key],
    )
  ).rows[0];
}

export interface BucketChanges {
  public?: boolean;
  fileSizeLimit?: number | null;
  allowedMimeTypes?: string[] | null;
}

/** The number of rows updated (0: missing or hidden). */
export async function updateBucketRow(db: Db, id: string, c: BucketChanges): Promise<number> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  const add = (col: string, v: unknown) => {
    params.push(v);
    sets.push(`${col} = $${params.length}`);
  };
  if (c.public !== undefined) add('public', c.public);
  if (c.fileSizeLimit !== undefined) add('file_size_limit', c.fileSizeLimit);
  if (c.allowedMimeTypes !== undefined) add('allowed_mime_types', c.allowedMimeTypes);
  sets.push('updated_at = now()');
  return (
    (await db.query(`update storage.buckets set ${sets.join(', ')} where id = $1`, params)).rowCount ?? 0
  );
}

export async function bucketExists(db: Db, id: string): Promise<boolean> {
  return ((await db.query('select 1 from storage.buckets where id = $1', [id])).rowCount ?? 0) > 0;
}

/** Whether the bucket exists and whether it holds any object (one round trip). */
export async function bucketState(db: Db, id: string): Promise<{ exists: boolean; has_objects: boolean }> {
  const [row] = (
    await db.query<{ exists: boolean; has_objects: boolean }>(
      `select exists (select 1 from storage.buckets where id = $1) as exists,
                exists (select 1 from storage.objects where bucket_id = $1) as has_objects`,
      [id],
    )
  ).rows;
  if (!row) throw new Error('deleteBucket: the existence query returned no row');
  return row;
}

/** The number of rows deleted (0: missing or hidden). */
export async function deleteBucketRow(db: Db, id: string): Promise<number> {
  return (await db.query('delete from storage.buckets where id = $1', [id])).rowCount ?? 0;
}
