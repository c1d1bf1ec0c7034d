/**
 * Writes of object rows that follow a byte write: the RLS dry run before the bytes, the commit
 * after them (serialised per key by an advisory lock, so the version it replaces is known exactly),
 * and the row updates of move and copy. All under the caller's role unless a signed token authorises.
 */
import { randomUUID } from 'node:crypto';
import type { ProjectContext } from '../../platform/project-context.js';
import type { Caller } from '../auth.js';
import type { ObjectLocation, StorageBackend } from '../backend/interface.js';
import {
  dryRun,
  inTx,
  lockKey,
  moveObjectRow,
  type ObjectWrite,
  selectObjectVersion,
  writeObjectRow,
} from '../database/index.js';
import { errors } from '../errors.js';
import { OPERATIONS, type Operation } from '../operations.js';

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
  operation: Operation,
  w: ObjectWrite,
  upsert: boolean,
): Promise<void> {
  await dryRun(project, caller, operation, (db) => writeObjectRow(db, w, upsert), {
    '23505': errors.keyAlreadyExists,
  });
}

/** Step 7: the row now points at the new bytes. Returns the row id and the version it replaced. */
export async function commitWrite(
  project: ProjectContext,
  caller: Caller,
  operation: Operation,
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
      const prev = await selectObjectVersion(db, w.bucket, w.key);
      const id = prev?.id ?? randomUUID();
      await writeObjectRow(db, w, upsert, id);
      return { id, previousVersion: prev?.version ?? null };
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
  operation: Operation,
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
    OPERATIONS.MOVE_OBJECT,
    async (db) => {
      await lockKey(db, dst.bucket, dst.key);
      return moveObjectRow(db, src, dst);
    },
    { '23505': errors.resourceAlreadyExists },
  );
  if (!n) throw errors.noSuchKey();
}
