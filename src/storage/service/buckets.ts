/** Buckets: SQL on storage.buckets under the caller's role (RLS decides), as in spec S1–S6. */
import type { ProjectContext } from '../../platform/project-context.js';
import { SERVICE, ownerUuid, type Caller } from '../auth.js';
import { errors } from '../errors.js';
import { inTx, rowsInTx } from './tx.js';

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

/** What the upload pipeline needs of a bucket. */
export interface BucketLimits {
  id: string;
  public: boolean;
  fileSizeLimit: number | null;
  allowedMimeTypes: string[] | null;
}

const COLUMNS =
  'id, name, owner, owner_id, public, type, file_size_limit, allowed_mime_types, created_at, updated_at';

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
    'storage.bucket.create',
    (db) =>
      db.query(
        `insert into storage.buckets (id, name, owner, owner_id, public, file_size_limit, allowed_mime_types, type)
         values ($1, $2, $3, $4, $5, $6, $7, 'STANDARD')`,
        [b.id, b.name, ownerUuid(caller), caller.sub ?? null, b.public, b.fileSizeLimit, b.allowedMimeTypes],
      ),
    { '23505': errors.bucketAlreadyExists },
  );
}

export interface ListBucketsQuery {
  limit?: number;
  offset?: number;
  search?: string;
  sortColumn?: 'id' | 'name' | 'created_at' | 'updated_at';
  sortOrder?: 'asc' | 'desc';
}

export async function listBuckets(
  project: ProjectContext,
  caller: Caller,
  q: ListBucketsQuery,
): Promise<BucketRow[]> {
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
  return rowsInTx<BucketRow>(project, caller, 'storage.bucket.list', sql, params);
}

export async function getBucket(project: ProjectContext, caller: Caller, id: string): Promise<BucketRow> {
  const row = (
    await rowsInTx<BucketRow>(
      project,
      caller,
      'storage.bucket.get',
      `select ${COLUMNS} from storage.buckets where id = $1`,
      [id],
    )
  )[0];
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
  const row = (
    await rowsInTx<BucketRow & { key_exists: boolean }>(
      project,
      SERVICE,
      'storage.bucket.get',
      `select ${COLUMNS}, exists (select 1 from storage.objects where bucket_id = $1 and name = $2) as key_exists from storage.buckets where id = $1`,
      [id, key ?? null],
    )
  )[0];
  if (!row) throw errors.noSuchBucket();
  return {
    keyExists: row.key_exists,
    id: row.id,
    public: row.public === true,
    fileSizeLimit: row.file_size_limit === null ? null : Number(row.file_size_limit),
    allowedMimeTypes: row.allowed_mime_types,
  };
}

export interface BucketChanges {
  public?: boolean;
  fileSizeLimit?: number | null;
  allowedMimeTypes?: string[] | null;
}

export async function updateBucket(
  project: ProjectContext,
  caller: Caller,
  id: string,
  c: BucketChanges,
): Promise<void> {
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
  const n = await inTx(
    project,
    caller,
    'storage.bucket.update',
    async (db) =>
      (await db.query(`update storage.buckets set ${sets.join(', ')} where id = $1`, params)).rowCount,
  );
  if (!n) throw errors.noSuchBucket();
}

/** Existence and emptiness bypassing RLS; the DELETE itself under RLS. */
export async function deleteBucket(project: ProjectContext, caller: Caller, id: string): Promise<void> {
  const state = await inTx(project, SERVICE, 'storage.bucket.delete', async (db) => {
    const [row] = (
      await db.query<{ exists: boolean; has_objects: boolean }>(
        `select exists (select 1 from storage.buckets where id = $1) as exists,
                exists (select 1 from storage.objects where bucket_id = $1) as has_objects`,
        [id],
      )
    ).rows;
    if (!row) throw new Error('deleteBucket: the existence query returned no row');
    return row;
  });
  if (!state.exists) throw errors.noSuchBucket();
  if (state.has_objects) throw errors.bucketNotEmpty();
  // 23503: an object was added between the check and the delete.
  const n = await inTx(
    project,
    caller,
    'storage.bucket.delete',
    async (db) => (await db.query('delete from storage.buckets where id = $1', [id])).rowCount,
    {
      '23503': errors.bucketNotEmpty,
    },
  );
  if (!n) throw errors.noSuchBucket();
}
