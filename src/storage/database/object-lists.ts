/**
 * SQL of the listings that page by key: list-v2 (keyset pages, optionally grouped into folders at
 * the next `/`) and the S3 ListObjects pages (byte order, collation "C"). Each runs on the
 * connection given, so only the objects its role sees count.
 */
import type { Db } from './tx.js';
import type { SystemMetadata } from './objects.js';

export interface ListV2Entry {
  name: string;
  is_folder: boolean;
  id: string | null;
  metadata: SystemMetadata | null;
  updated_at: Date | null;
  created_at: Date | null;
  last_accessed_at: Date | null;
  cursor_ts: string | null;
}

export interface ListV2Page {
  prefix: string;
  withDelimiter: boolean;
  column: 'name' | 'updated_at' | 'created_at';
  order: 'asc' | 'desc';
  /** How many entries to read. */
  limit: number;
  /** Past this entry: its name, its sort column's value as text (`ts`), whether it is a folder. */
  after?: { last: string; ts: string | null; folder: boolean };
}

/** One page of list-v2 entries: folders first when sorted by a timestamp, then by name. */
export async function selectListV2Page(db: Db, bucket: string, o: ListV2Page): Promise<ListV2Entry[]> {
  const cmp = o.order === 'desc' ? '<' : '>';
  const params: unknown[] = [bucket, o.prefix, o.withDelimiter, o.limit];
  const col = o.column === 'name' ? null : o.column === 'updated_at' ? 'updated_at' : 'created_at';
  let where = 'true';
  const cursor = o.after;
  if (cursor) {
    params.push(cursor.last);
    const n = `$${params.length}`;
    if (!col) where = `e.name collate "C" ${cmp} ${n}`;
    else if (cursor.folder) where = `(e.is_folder and e.name collate "C" ${cmp} ${n}) or not e.is_folder`;
    else {
      params.push(cursor.ts);
      where = `not e.is_folder and (e.${col}, e.name collate "C") ${cmp} ($${params.length}::timestamptz, ${n})`;
    }
  }
  const order = col
    ? `e.is_folder desc, e.${col} ${o.order}, e.name collate "C" ${o.order}`
    : `e.name collate "C" ${o.order}`;
  const sql = `
    with m as (
      select o.name, o.id, o.metadata, o.updated_at, o.created_at, o.last_accessed_at,
             case when $3 then strpos(substr(o.name, length($2) + 1), '/') else 0 end as slash
      from storage.objects o
      where o.bucket_id = $1 and left(o.name, length($2)) = $2
    ),
    e as (
      select left(name, length($2) + slash) as name, true as is_folder, null::uuid as id, null::jsonb as metadata,
             null::timestamptz as updated_at, null::timestamptz as created_at, null::timestamptz as last_accessed_at
      from m where slash > 0 group by 1
      union all
      select name, false, id, metadata, updated_at, created_at, last_accessed_at from m where slash = 0
    )
    select e.*, ${col ? `e.${col}::text` : 'null'} as cursor_ts from e
    where ${where}
    order by ${order}
    limit $4`;
  return (await db.query<ListV2Entry>(sql, params)).rows;
}

export interface KeyRow {
  name: string;
  metadata: SystemMetadata | null;
  updated_at: Date;
}

/** Up to `limit` objects under `prefix` after the key `after`, in byte order. */
export async function selectKeysAfter(
  db: Db,
  bucket: string,
  prefix: string,
  after: string,
  limit: number,
): Promise<KeyRow[]> {
  return (
    await db.query<KeyRow>(
      `select name, metadata, updated_at from storage.objects
         where bucket_id = $1 and starts_with(name, $2) and name collate "C" > $3
         order by name collate "C" limit $4`,
      [bucket, prefix, after, limit],
    )
  ).rows;
}

/** Whether any object under `prefix` comes after the key `after`. */
export async function hasKeyAfter(db: Db, bucket: string, prefix: string, after: string): Promise<boolean> {
  const more = await db.query(
    `select 1 from storage.objects where bucket_id = $1 and starts_with(name, $2) and name collate "C" > $3 limit 1`,
    [bucket, prefix, after],
  );
  return (more.rowCount ?? 0) > 0;
}
