/**
 * The check a refresh makes before its statements, in one small query: the schema version now
 * (the read sets and claim keys are cached per version: scopes.ts), and whether a snapshot taken
 * now sees the transactions of the commits it refreshes for. A commit is read from the WAL a
 * moment before PostgreSQL ends its transaction in the proc array; once one snapshot sees it,
 * every later one does, so the refresh's statements do too. Transaction ids come as test_decoding
 * prints them (32 bits): each is placed in the epoch of the snapshot's xmax, or the one before.
 */
import type pg from 'pg';

/**
 * $1: the 32-bit transaction ids (int8[]). Functions are qualified: a tenant's
 * `public.unnest(bigint[])` (an exact match beats pg_catalog's polymorphic one) never answers.
 */
const CHECK_SQL = `select graphql.get_schema_version()::int as v,
  (select coalesce(pg_catalog.bool_and(pg_catalog.pg_visible_in_snapshot(
            (case when f.id >= m.xmax then f.id - 4294967296 else f.id end)::text::xid8, m.snap)), true)
     from (select s as snap, pg_catalog.pg_snapshot_xmax(s)::text::int8 as xmax
             from pg_catalog.pg_current_snapshot() s) m,
          lateral (select ((m.xmax >> 32) << 32) | x as id from pg_catalog.unnest($1::int8[]) x) f) as seen`;

export interface Checked {
  /** Undefined: the database did not answer. */
  version?: number;
  /** Whether a snapshot taken now sees every one of the transactions. */
  seen: boolean;
}

/** The schema version and whether `xids` are all seen. */
export async function checkNow(pool: pg.Pool, xids: number[]): Promise<Checked> {
  try {
    const { rows } = await pool.query(CHECK_SQL, [xids]);
    return checkedOf(rows[0]);
  } catch {
    return { seen: false };
  }
}

/**
 * The check as a statement of its own, the ids written in (for a message of other statements);
 * undefined when an id is not an integer.
 */
export function checkStatement(xids: readonly number[]): string | undefined {
  if (!xids.every((x) => Number.isSafeInteger(x))) return undefined;
  return CHECK_SQL.replace('$1::int8[]', `'{${xids.join(',')}}'::int8[]`);
}

/** A check's row (checkNow's query or checkStatement's). */
export function checkedOf(row: { v?: unknown; seen?: unknown } | undefined): Checked {
  return { version: Number(row?.v), seen: row?.seen === true };
}
