/**
 * All SQL of analytics buckets and the Iceberg catalog (sql/project/0150_storage_iceberg.sql):
 * storage.buckets_analytics, storage.iceberg_namespaces, storage.iceberg_tables and
 * storage.iceberg_metadata_files. Every value is bound; statements run in the caller's
 * transaction (`icebergTx`, as the caller's role: the routes admit only the service role).
 */
import type { ProjectContext } from '../../platform/project-context.js';
import type { Caller } from '../auth.js';
import type { ObjectLocation } from '../backend/interface.js';
import type { Operation } from '../operations.js';
import { type Db, inTx } from './tx.js';

export type { Db } from './tx.js';

/** Runs `work` in one transaction as `caller` (database errors become Storage errors). */
export function icebergTx<T>(
  project: ProjectContext,
  caller: Caller,
  operation: Operation,
  work: (db: Db) => Promise<T>,
): Promise<T> {
  return inTx(project, caller, operation, work);
}

/**
 * The metadata-file versions the storage reconciliation must keep (src/storage/reconcile.ts):
 * a `select bucket_id, key, version` to union with the object versions.
 */
export const ICEBERG_LIVE_VERSIONS = 'select bucket_id, key, version from storage.iceberg_metadata_files';

// --- Analytics buckets ---

export interface AnalyticsBucketRow {
  id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}

const BUCKET_COLUMNS = 'id, name, created_at, updated_at';

/** The new bucket, or undefined when the name is taken. */
export async function insertAnalyticsBucket(db: Db, name: string): Promise<AnalyticsBucketRow | undefined> {
  const r = await db.query<AnalyticsBucketRow>(
    `insert into storage.buckets_analytics (name) values ($1)
     on conflict (name) do nothing returning ${BUCKET_COLUMNS}`,
    [name],
  );
  return r.rows[0];
}

export interface ListAnalyticsBuckets {
  search?: string;
  limit?: number;
  offset?: number;
  sortColumn?: 'id' | 'name' | 'created_at' | 'updated_at';
  sortOrder?: 'asc' | 'desc';
}

const SORT_COLUMNS: Record<string, string> = {
  id: 'name',
  name: 'name',
  created_at: 'created_at',
  updated_at: 'updated_at',
};

export async function listAnalyticsBuckets(db: Db, q: ListAnalyticsBuckets): Promise<AnalyticsBucketRow[]> {
  const params: unknown[] = [];
  let sql = `select ${BUCKET_COLUMNS} from storage.buckets_analytics`;
  if (q.search) {
    params.push(q.search);
    sql += ` where strpos(lower(name), lower($${params.length})) > 0`;
  }
  // `id` of the reply is the name (as the reference), so sorting by id sorts by name.
  const column = SORT_COLUMNS[q.sortColumn ?? 'name'] ?? 'name';
  sql += ` order by ${column} ${q.sortOrder === 'desc' ? 'desc' : 'asc'}, name`;
  if (q.limit !== undefined) {
    params.push(q.limit);
    sql += ` limit $${params.length}`;
  }
  if (q.offset !== undefined) {
    params.push(q.offset);
    sql += ` offset $${params.length}`;
  }
  return (await db.query<AnalyticsBucketRow>(sql, params)).rows;
}

/** The bucket (catalog) by name; `lock` takes its row lock (delete). */
export async function findAnalyticsBucket(
  db: Db,
  name: string,
  lock = false,
): Promise<AnalyticsBucketRow | undefined> {
  const r = await db.query<AnalyticsBucketRow>(
    `select ${BUCKET_COLUMNS} from storage.buckets_analytics where name = $1${lock ? ' for update' : ''}`,
    [name],
  );
  return r.rows[0];
}

export async function bucketHasNamespaces(db: Db, catalogId: string): Promise<boolean> {
  const r = await db.query('select 1 from storage.iceberg_namespaces where catalog_id = $1 limit 1', [
    catalogId,
  ]);
  return (r.rowCount ?? 0) > 0;
}

export async function deleteAnalyticsBucket(db: Db, id: string): Promise<void> {
  await db.query('delete from storage.buckets_analytics where id = $1', [id]);
}

// --- Namespaces ---

export interface NamespaceRow {
  id: string;
  name: string;
  metadata: Record<string, string>;
}

/** Creates the namespace, or merges `properties` into an existing one's (the reference's upsert). */
export async function upsertNamespace(
  db: Db,
  catalogId: string,
  name: string,
  properties: Record<string, string>,
): Promise<NamespaceRow> {
  const r = await db.query<NamespaceRow>(
    `insert into storage.iceberg_namespaces (catalog_id, name, metadata) values ($1, $2, $3::jsonb)
     on conflict (catalog_id, name) do update
       set metadata = storage.iceberg_namespaces.metadata || excluded.metadata, updated_at = now()
     returning id, name, metadata`,
    [catalogId, name, JSON.stringify(properties)],
  );
  return r.rows[0] as NamespaceRow;
}

/** The namespace; `lock` takes its row lock (drop, and table creation against a drop). */
export async function findNamespace(
  db: Db,
  catalogId: string,
  name: string,
  lock: 'update' | 'share' | false = false,
): Promise<NamespaceRow | undefined> {
  const r = await db.query<NamespaceRow>(
    `select id, name, metadata from storage.iceberg_namespaces where catalog_id = $1 and name = $2${
      lock ? ` for ${lock}` : ''
    }`,
    [catalogId, name],
  );
  return r.rows[0];
}

/** Names after `after` (keyset pagination), at most `limit` (null: all). */
export async function listNamespaces(
  db: Db,
  catalogId: string,
  after: string | undefined,
  limit: number | null,
): Promise<string[]> {
  const r = await db.query<{ name: string }>(
    `select name from storage.iceberg_namespaces
     where catalog_id = $1 and ($2::text is null or name > $2) order by name limit $3`,
    [catalogId, after ?? null, limit],
  );
  return r.rows.map((x) => x.name);
}

export async function setNamespaceProperties(
  db: Db,
  id: string,
  properties: Record<string, string>,
): Promise<void> {
  await db.query(
    'update storage.iceberg_namespaces set metadata = $2::jsonb, updated_at = now() where id = $1',
    [id, JSON.stringify(properties)],
  );
}

export async function namespaceHasTables(db: Db, namespaceId: string): Promise<boolean> {
  const r = await db.query('select 1 from storage.iceberg_tables where namespace_id = $1 limit 1', [
    namespaceId,
  ]);
  return (r.rowCount ?? 0) > 0;
}

export async function deleteNamespace(db: Db, id: string): Promise<void> {
  await db.query('delete from storage.iceberg_namespaces where id = $1', [id]);
}

// --- Tables ---

export interface TableRow {
  id: string;
  metadata_location: string;
  /** The metadata JSON text (parsed by the caller, keeping 64-bit ids exact). */
  metadata: string;
  version: number;
}

/** The table; `lock` takes its row lock, which serializes the table's commits. */
export async function findTable(
  db: Db,
  namespaceId: string,
  name: string,
  lock = false,
): Promise<TableRow | undefined> {
  const r = await db.query<TableRow>(
    `select id, metadata_location, metadata::text as metadata, version
     from storage.iceberg_tables where namespace_id = $1 and name = $2${lock ? ' for update' : ''}`,
    [namespaceId, name],
  );
  return r.rows[0];
}

export async function listTables(
  db: Db,
  namespaceId: string,
  after: string | undefined,
  limit: number | null,
): Promise<string[]> {
  const r = await db.query<{ name: string }>(
    `select name from storage.iceberg_tables
     where namespace_id = $1 and ($2::text is null or name > $2) order by name limit $3`,
    [namespaceId, after ?? null, limit],
  );
  return r.rows.map((x) => x.name);
}

/** Moves a table to another name or namespace; false when the destination name is taken. */
export async function renameTable(db: Db, id: string, namespaceId: string, name: string): Promise<boolean> {
  try {
    await db.query(
      'update storage.iceberg_tables set namespace_id = $2, name = $3, updated_at = now() where id = $1',
      [id, namespaceId, name],
    );
    return true;
  } catch (err) {
    if ((err as { code?: unknown }).code === '23505') return false;
    throw err;
  }
}

export interface NewTableRow {
  catalogId: string;
  namespaceId: string;
  name: string;
  tableUuid: string;
  location: string;
  metadataLocation: string;
  metadata: string;
}

/** The new table's id, or undefined when the name is taken. */
export async function insertTable(db: Db, t: NewTableRow): Promise<string | undefined> {
  const r = await db.query<{ id: string }>(
    `insert into storage.iceberg_tables
       (catalog_id, namespace_id, name, table_uuid, location, metadata_location, metadata)
     values ($1, $2, $3, $4, $5, $6, $7::json)
     on conflict (namespace_id, name) do nothing returning id`,
    [t.catalogId, t.namespaceId, t.name, t.tableUuid, t.location, t.metadataLocation, t.metadata],
  );
  return r.rows[0]?.id;
}

export async function updateTableMetadata(
  db: Db,
  id: string,
  t: { version: number; location: string; metadataLocation: string; metadata: string },
): Promise<void> {
  await db.query(
    `update storage.iceberg_tables
     set version = $2, location = $3, metadata_location = $4, metadata = $5::json, updated_at = now()
     where id = $1`,
    [id, t.version, t.location, t.metadataLocation, t.metadata],
  );
}

/** Removes the table; returns its metadata files (for the caller to delete from the backend). */
export async function deleteTable(db: Db, id: string): Promise<ObjectLocation[]> {
  const files = await db.query<{ bucket_id: string; key: string; version: string }>(
    'delete from storage.iceberg_metadata_files where table_id = $1 returning bucket_id, key, version',
    [id],
  );
  await db.query('delete from storage.iceberg_tables where id = $1', [id]);
  return files.rows.map((f) => ({ bucket: f.bucket_id, key: f.key, version: f.version }));
}

// --- Metadata files ---

export async function insertMetadataFile(db: Db, tableId: string, loc: ObjectLocation): Promise<void> {
  await db.query(
    'insert into storage.iceberg_metadata_files (table_id, bucket_id, key, version) values ($1, $2, $3, $4)',
    [tableId, loc.bucket, loc.key, loc.version],
  );
}

/** Forgets the table's metadata files other than `keep` (keys); returns them for deletion. */
export async function pruneMetadataFiles(db: Db, tableId: string, keep: string[]): Promise<ObjectLocation[]> {
  const r = await db.query<{ bucket_id: string; key: string; version: string }>(
    `delete from storage.iceberg_metadata_files
     where table_id = $1 and not (key = any($2::text[])) returning bucket_id, key, version`,
    [tableId, keep],
  );
  return r.rows.map((f) => ({ bucket: f.bucket_id, key: f.key, version: f.version }));
}
