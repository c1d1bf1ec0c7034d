/**
 * Writes of object rows that follow a byte write: the RLS dry run before the bytes, the commit
 * after them (serialised per key by an advisory lock, so the version it replaces is known exactly),
 * and the row updates of move and copy. All under the caller's role unless a signed token authorises.
 */
import { randomUUID } from 'node:crypto';
import type { ProjectContext } from '../../platform/project-context.js';
import type { Caller } from '../auth.js';
import type { ObjectLocation, StorageBackend } from '../backend/interface.js';
import { errors } from '../errors.js';
import { dryRun, inTx, type Db } from './tx.js';
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

function paramsOf(w: ObjectWrite, id: string | null = null): unknown[] {
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

/** The per-key lock every commit of an object row takes (and the sweeper, before removing bytes). */
export async function lockKey(db: Db, bucket: string, key: string): Promise<void> {
  await db.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`storage:${bucket}/${key}`]);
}

/**
 * For commitWrite's `underLock`: the bytes the row is about to reference are still there. The
 * storage sweep removes unreferenced bytes under the same per-key lock, so bytes it took are never
 * committed to (the write fails instead).
 */
export function requireBytes(backend: StorageBackend, loc: ObjectLocation): () => Promise<void> {
  return async () => {
    if (backend.has && !(await backend.has(loc))) throw errors.internal();
  };
}

/** Step 5 of the pipeline: would the caller be allowed to write this row? */
export async function dryRunWrite(
  project: ProjectContext,
  caller: Caller,
  operation: string,
  w: ObjectWrite,
  upsert: boolean,
): Promise<void> {
  await dryRun(
    project,
    caller,
    operation,
    async (db) => {
      await db.query(upsertSql(upsert), paramsOf(w));
    },
    { '23505': errors.keyAlreadyExists },
  );
}

/** Step 7: the row now points at the new bytes. Returns the row id and the version it replaced. */
export async function commitWrite(
  project: ProjectContext,
  caller: Caller,
  operation: string,
  w: ObjectWrite,
  upsert: boolean,
  /** Runs under the key's lock before the row is written (e.g. checks that the bytes are still there). */
  underLock?: () => Promise<void>,
): Promise<{ id: string; previousVersion: string | null }> {
  return inTx(
    project,
    caller,
    operation,
    async (db) => {
      await lockKey(db, w.bucket, w.key);
      await underLock?.();
      // Under the lock the row cannot change until commit. A row the caller cannot see is either
      // a unique violation (insert) or makes the upsert fail (ON CONFLICT DO UPDATE needs SELECT
      // and UPDATE on the existing row), so what this sees is what the write replaces.
      const prev = await db.query<{ id: string; version: string | null }>(
        'select id, version from storage.objects where bucket_id = $1 and name = $2',
        [w.bucket, w.key],
      );
      const id = prev.rows[0]?.id ?? randomUUID();
      await db.query(upsertSql(upsert), paramsOf(w, id));
      return { id, previousVersion: prev.rows[0]?.version ?? null };
    },
    { '23505': errors.keyAlreadyExists },
  );
}

/**
 * Steps 7 and 8 for bytes just written at `w`'s version: commit the row (the bytes must still be
 * there), then drop the version it replaced; if the commit fails, the new bytes go instead.
 * Returns the row id.
 */
export async function commitNewBytes(
  backend: StorageBackend,
  project: ProjectContext,
  caller: Caller,
  operation: string,
  w: ObjectWrite & { version: string },
  upsert: boolean,
): Promise<string> {
  const loc = { bucket: w.bucket, key: w.key, version: w.version };
  let committed: Awaited<ReturnType<typeof commitWrite>>;
  try {
    committed = await commitWrite(project, caller, operation, w, upsert, requireBytes(backend, loc));
  } catch (err) {
    await backend.delete([loc]).catch(() => {});
    throw err;
  }
  if (committed.previousVersion && committed.previousVersion !== w.version)
    await backend.delete([{ ...loc, version: committed.previousVersion }]).catch(() => {});
  return committed.id;
}

/**
 * S16 commit: the source row (still at `fromVersion`) moves to the destination in place (id kept),
 * with the caller as owner and the new bytes' metadata.
 */
export async function commitMove(
  project: ProjectContext,
  caller: Caller,
  src: { bucket: string; key: string; version: string | null },
  dst: ObjectWrite,
): Promise<void> {
  const n = await inTx(
    project,
    caller,
    'storage.object.move',
    async (db) => {
      await lockKey(db, dst.bucket, dst.key);
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
      return res.rowCount;
    },
    { '23505': errors.resourceAlreadyExists },
  );
  if (!n) throw errors.noSuchKey();
}
