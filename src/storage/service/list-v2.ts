/**
 * list-v2 (beyond S1–S21; storage-js listV2): full keys under a prefix, optionally grouped at the
 * next `/` into folders ("full/path/"), keyset-paginated with an opaque cursor. Runs under the
 * caller's role, so only visible objects count.
 */
import type { ProjectContext } from '../../platform/project-context.js';
import type { Caller } from '../auth.js';
import { inTx, type ListV2Entry, selectListV2Page } from '../database/index.js';
import { errors } from '../errors.js';
import { OPERATIONS } from '../operations.js';

export interface ListV2Options {
  prefix: string;
  limit: number;
  cursor?: string;
  withDelimiter: boolean;
  column: 'name' | 'updated_at' | 'created_at';
  order: 'asc' | 'desc';
}

interface Cursor {
  last: string;
  ts: string | null;
  folder: boolean;
}

/** base64 of `l:<last>\no:<order>\nc:<column>\na:<ts>\nf:<0|1>` (the reference's shape plus a folder flag). */
function encodeCursor(e: ListV2Entry, o: ListV2Options): string {
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
  const after = o.cursor ? decodeCursor(o.cursor, o) : undefined;
  const rows = await inTx(project, caller, OPERATIONS.LIST_OBJECTS_V2, (db) =>
    selectListV2Page(db, bucket, { ...o, limit: o.limit + 1, after }),
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
