/**
 * SQL of object row writes: the insert/upsert of an upload, the per-key commit lock, the read of
 * the row a commit replaces, and the in-place update of a move. Each runs on the connection given.
 */
import type { Db } from './tx.js';
import type { SystemMetadata } from './objects.js';

export interface ObjectWrite {
  bucket: string;
  key: string;
  owner: string | null;
  ownerId: string | null;
  metadata: Partial<SystemMetadata>;
  userMetadata: Record<string, unknown> | null;
  version: string | null;
}

/** No RETURNING: an upload needs only INSERT rights (RETURNING would also need SELECT on the new row). */
function upsertSql(upsert: boolean): string {
  const insert = `insert into storage.objects (bucket_id, name, owner, owner_id, metadata, user_metadata, version, id)
                  values ($1, $2, $3, $4, $5, $6, $7, coalesce($8::uuid, gen_random_uuid()))`;
  if (!upsert) return insert;
  return `${insert} on conflict (bucket_id, name) do update set owner = excluded.owner, owner_id = excluded.owner_id,
            metadata = excluded.metadata, user_metadata = excluded.user_metadata, version = excluded.version, last_accessed_at = now()`;
}

function paramsOf(w: ObjectWrite, id: string | null): unknown[] {
  return [
    w.bucket,
    w.key,
    w.owner,
    w.ownerId,
    JSON.stringify(w.metadata),
    w.userMetadata === null ? null : JSON.stringify(w.userMetadata),
    w.version,
    id,
  ];
}

/** Inserts the row (with `upsert`, or replaces the existing one); `id` null: a new random id. */
export async function writeObjectRow(
  db: Db,
  w: ObjectWrite,
  upsert: boolean,
  id: string | null = null,
): Promise<void> {
  await db.query(upsertSql(upsert), paramsOf(w, id));
}

/** The per-key lock every commit of an object row takes (and the sweeper, before removing bytes). */
export async function lockKey(db: Db, bucket: string, key: string): Promise<void> {
  await db.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`storage:${bucket}/${key}`]);
}

/** The id and version of the row at bucket/key, as the role sees it. */
export async function selectObjectVersion(
  db: Db,
  bucket: string,
  key: string,
): Promise<{ id: string; version: string | null } | undefined> {
  return (
    await db.query<{ id: string; version: string | null }>(
      'select id, version from storage.objects where bucket_id = $1 and name = $2',
      [bucket, key],
    )
  ).rows[0];
}

/**
 * Moves the row at `src` (only while still at `src.version`) to `dst` in place (id kept), with
 * `dst`'s owner, metadata and version. The number of rows moved (0: gone, changed or hidden).
 */
export async function moveObjectRow(
  db: Db,
  src: { bucket: string; key: string; version: string | null },
  dst: ObjectWrite,
): Promise<number> {
  const res = await db.query(
    `update storage.objects set bucket_id = $3, name = $4, owner = $5, owner_id = $6, metadata = $7, version = $8
         where bucket_id = $1 and name = $2 and version is not distinct from $9`,
    [
      src.bucket,
      src.key,
      dst.bucket,
      dst.key,
      dst.owner,
      dst.ownerId,
      JSON.stringify(dst.metadata),
      dst.version,
      src.version,
    ],
  );
  return res.rowCount ?? 0;
}
