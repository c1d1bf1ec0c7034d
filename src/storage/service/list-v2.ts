/**
 * list-v2 (beyond S1–S21; storage-js listV2): full keys under a prefix, optionally grouped at the
 * next `/` into folders ("full/path/"), keyset-paginated with an opaque cursor. Runs under the
 * caller's role, so only visible objects count.
 */
import type { ProjectContext } from '../../platform/project-context.js';
import type { Caller } from '../auth.js';
import { errors } from '../errors.js';
import { inTx } from './tx.js';
import type { SystemMetadata } from './objects.js';

export interface ListV2Options {
  prefix: string;
  limit: number;
  cursor?: string;
  withDelimiter: boolean;
  column: 'name' | 'updated_at' | 'created_at';
  order: 'asc' | 'desc';
}

interface Entry {
  name: string;
  is_folder: boolean;
  id: string | null;
  metadata: SystemMetadata | null;
  updated_at: Date | null;
  created_at: Date | null;
  last_accessed_at: Date | null;
  cursor_ts: string | null;
}

interface Cursor {
  last: string;
  ts: string | null;
  folder: boolean;
}

/** base64 of `l:<last>\no:<order>\nc:<column>\na:<ts>\nf:<0|1>` (the reference's shape plus a folder flag). */
function encodeCursor(e: Entry, o: ListV2Options): string {
  return Buffer.from(
    `l:${e.name}\no:${o.order}\nc:${o.column}\na:${e.cursor_ts ?? ''}\nf:${e.is_folder ? 1 : 0}`,
  ).toString('base64');
}

function decodeCursor(s: string, o: ListV2Options): Cursor {
  const fields = new Map<string, string>();
  for (const line of Buffer.from(s, 'base64').toString('utf8').split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) fields.set(line.slice(0, i), line.slice(i + 1));
  }
  const last = fields.get('l');
  if (last === undefined || fields.get('o') !== o.order || fields.get('c') !== o.column)
    throw errors.invalidRequest('Invalid cursor');
  const ts = fields.get('a') || null;
  if (o.column !== 'name' && fields.get('f') !== '1' && (!ts || !Number.isFinite(Date.parse(ts))))
    throw errors.invalidRequest('Invalid cursor');
  return { last, ts, folder: fields.get('f') === '1' };
}

export async function listObjectsV2(
  project: ProjectContext,
  caller: Caller,
  bucket: string,
  o: ListV2Options,
) {
  const cmp = o.order === 'desc' ? '<' : '>';
  const params: unknown[] = [bucket, o.prefix, o.withDelimiter, o.limit + 1];
  const col = o.column === 'name' ? null : o.column === 'updated_at' ? 'updated_at' : 'created_at';
  let where = 'true';
  const cursor = o.cursor ? decodeCursor(o.cursor, o) : undefined;
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
  const rows = await inTx(
    project,
    caller,
    'storage.object.list_v2',
    async (db) => (await db.query<Entry>(sql, params)).rows,
  );
  const hasNext = rows.length > o.limit;
  const page = rows.slice(0, o.limit);
  const last = page[page.length - 1];
  return {
    hasNext,
    ...(hasNext && last ? { nextCursor: encodeCursor(last, o), nextCursorKey: last.name } : {}),
    folders: page.filter((e) => e.is_folder).map((e) => ({ name: e.name, key: e.name })),
    objects: page
      .filter((e) => !e.is_folder)
      .map((e) => ({
        id: e.id,
        name: e.name,
        key: e.name,
        metadata: e.metadata,
        updated_at: e.updated_at,
        created_at: e.created_at,
        last_accessed_at: e.last_accessed_at,
      })),
  };
}
