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

export type Db = pg.PoolClient;

/** SQLSTATE → the Storage error it means for this statement (else the generic mapping applies). */
export type PgErrorMap = Partial<Record<string, () => StorageError>>;

export async function inTx<T>(
  project: ProjectContext,
  caller: Caller,
  operation: string,
  work: (db: Db) => Promise<T>,
  pgErrors: PgErrorMap = {},
): Promise<T> {
  try {
    return await withRole(project.pool, caller, async (db) => {
      await db.query(
        "select set_config('storage.operation', $1, true), set_config('storage.allow_delete_query', 'true', true)",
        [operation],
      );
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

/** One statement as the caller in its own transaction (inTx's error mapping): its rows. */
export async function rowsInTx<R extends object>(
  project: ProjectContext,
  caller: Caller,
  operation: string,
  sql: string,
  params: unknown[],
): Promise<R[]> {
  return inTx(project, caller, operation, async (db) => (await db.query<R>(sql, params)).rows);
}

class DryRunDone extends Error {}

/** Runs `work` as the caller and rolls it back (the RLS dry run of a write). */
export async function dryRun(
  project: ProjectContext,
  caller: Caller,
  operation: string,
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
