/**
 * Transactions of the Storage service: withRole (role + request.jwt.claims) plus the settings the
 * storage schema reads: `storage.operation` (for operation-scoped policies) and
 * `storage.allow_delete_query` (the delete guard trigger lets the API delete rows).
 * Database errors the caller did not handle become Storage errors.
 */
import type pg from 'pg';
import { withRole } from '../../db/with-role.js';
import type { ProjectContext } from '../../platform/project-context.js';
import type { Caller } from '../auth.js';
import { StorageError, fromPgError } from '../errors.js';
import type { Operation } from '../operations.js';

/** A connection inside one of inTx's transactions. */
export type Db = pg.PoolClient;

/** What a statement outside inTx runs on: a pool, or a client leased from one. */
export type Queryable = pg.Pool | pg.PoolClient;

/** SQLSTATE → the Storage error it means for this statement (else the generic mapping applies). */
export type PgErrorMap = Partial<Record<string, () => StorageError>>;

/** The settings of inTx's prelude, set for the rest of the transaction. */
async function setOperation(db: Db, operation: Operation): Promise<void> {
  await db.query(
    "select set_config('storage.operation', $1, true), set_config('storage.allow_delete_query', 'true', true)",
    [operation],
  );
}

export async function inTx<T>(
  project: ProjectContext,
  caller: Caller,
  operation: Operation,
  work: (db: Db) => Promise<T>,
  pgErrors: PgErrorMap = {},
): Promise<T> {
  try {
    return await withRole(project.pool, caller, async (db) => {
      await setOperation(db, operation);
      return work(db);
    });
  } catch (err) {
    if (err instanceof StorageError) throw err;
    const specific = pgErrors[(err as { code?: string }).code ?? ''];
    if (specific) throw specific();
    const mapped = fromPgError(err);
    if (mapped) throw mapped;
    throw err;
  }
}

class DryRunDone extends Error {}

/** Runs `work` as the caller and rolls it back (the RLS dry run of a write). */
export async function dryRun(
  project: ProjectContext,
  caller: Caller,
  operation: Operation,
  work: (db: Db) => Promise<void>,
  pgErrors: PgErrorMap = {},
): Promise<void> {
  try {
    await inTx(
      project,
      caller,
      operation,
      async (db) => {
        await work(db);
        throw new DryRunDone();
      },
      pgErrors,
    );
  } catch (err) {
    if (!(err instanceof DryRunDone)) throw err;
  }
}
