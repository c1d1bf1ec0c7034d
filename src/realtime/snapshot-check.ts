/**
 * The check a refresh makes before its statements, in one small query: the schema version now
 * (the read sets and claim keys are cached per version: scopes.ts), and whether a snapshot taken
 * now sees the transactions of the commits it refreshes for. A commit is read from the WAL a
 * moment before PostgreSQL ends its transaction in the proc array; once one snapshot sees it,
 * every later one does, so the refresh's statements do too. Transaction ids come as test_decoding
 * prints them (32 bits): each is placed in the epoch of the snapshot's xmax, or the one before.
 */
import type pg from 'pg';
import { discardClient, withPooledClient } from '../db/pooled-client.js';
import { forgetPrepared, isPreparedStateLost, segmentsFor, stopPreparing } from '../graphql/engine.js';

/**
 * $1: the 32-bit transaction ids (int8[]). Functions are qualified: a tenant's
 * `public.unnest(bigint[])` (an exact match beats pg_catalog's polymorphic one) never answers.
 */
const CHECK_SQL = `select graphql.get_schema_version()::int as v,
  (select coalesce(pg_catalog.bool_and(pg_catalog.pg_visible_in_snapshot(
            (case when f.id >= m.xmax then f.id - 4294967296 else f.id end)::text::xid8, m.snap)), true)
     from (select s as snap, pg_catalog.pg_snapshot_xmax(s)::text::int8 as xmax
             from pg_catalog.pg_current_snapshot() s) m,
          lateral (select ((m.xmax >> 32) << 32) | x as id from pg_catalog.unnest($1::int8[]) x) f) as seen,
  pg_catalog.pg_current_snapshot()::text as snap`;

export interface Checked {
  /** Undefined: the database did not answer. */
  version?: number;
  /** Whether a snapshot taken now sees every one of the transactions. */
  seen: boolean;
  /** That snapshot (what it sees: newest-rows.ts counts on it), when it was read. */
  snapshot?: Snapshot;
}

/** A snapshot's transactions as pg_current_snapshot() gives them (64-bit ids). */
export interface Snapshot {
  xmin: bigint;
  xmax: bigint;
  running: Set<bigint>;
}

/** `xmin:xmax:xip,…` → a Snapshot; undefined for anything else. */
export function snapshotOf(text: unknown): Snapshot | undefined {
  const m = typeof text === 'string' ? /^(\d+):(\d+):([\d,]*)$/.exec(text) : null;
  if (!m) return undefined;
  const running = new Set((m[3] as string).split(',').filter(Boolean).map(BigInt));
  return { xmin: BigInt(m[1] as string), xmax: BigInt(m[2] as string), running };
}

/**
 * Whether the snapshot sees a transaction of a 32-bit id (as test_decoding prints it): the id is
 * the one within 2^31 of the snapshot's xmax, as PostgreSQL compares transaction ids — an id from
 * xmax on is a transaction that started after the snapshot. (The check above places ids of
 * commits already reported, so never after xmax, in xmax's epoch or the one before.)
 */
export function sees(s: Snapshot, xid: number): boolean {
  const ahead = (BigInt(xid) - s.xmax) & 0xffffffffn;
  const id = s.xmax + (ahead >= 0x80000000n ? ahead - 0x100000000n : ahead);
  return id < s.xmin || (id < s.xmax && !s.running.has(id));
}

/**
 * The schema version and whether `xids` are all seen. Asked before and after every refresh, so the
 * check is a prepared statement of the connection (the engine's, prepared.ts: `execute` from the
 * first use on; inlined on a pool that keeps no session state): parsed and planned once per
 * connection rather than at every call (about a tenth of the pooled connections' CPU in the
 * realtime bench's profile).
 */
export async function checkNow(pool: pg.Pool, xids: number[]): Promise<Checked> {
  if (!xids.every((x) => Number.isSafeInteger(x))) return { seen: false };
  for (let attempt = 0; ; attempt++) {
    try {
      return await withPooledClient(pool, (client) => askOn(pool, client, xids));
    } catch (e) {
      // A prepared statement the connection does not have: the pool keeps no session state (a
      // transaction-mode pooler), as the engine concludes too; inlined from now on.
      if (attempt === 0 && isPreparedStateLost(e)) {
        stopPreparing(pool);
        continue;
      }
      return { seen: false };
    }
  }
}

async function askOn(pool: pg.Pool, client: pg.PoolClient, xids: number[]): Promise<Checked> {
  const prelude = { sql: CHECK_SQL, params: [`{${xids.join(',')}}`] };
  const batch = segmentsFor(pool, client, [{ prelude, items: [] }]);
  const text = [...batch.before, ...batch.segments.map((s) => s.prelude)].join('; ');
  try {
    const res = (await client.query(text)) as unknown as pg.QueryResult[] | pg.QueryResult;
    batch.commit();
    const last = Array.isArray(res) ? res[res.length - 1] : res;
    return checkedOf(last?.rows[0]);
  } catch (e) {
    // What the failed message prepared is unknown: the connection starts afresh.
    forgetPrepared(client);
    await client.query('deallocate all').catch((err: unknown) => discardClient(client, err));
    throw e;
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
export function checkedOf(row: { v?: unknown; seen?: unknown; snap?: unknown } | undefined): Checked {
  const snapshot = snapshotOf(row?.snap);
  return { version: Number(row?.v), seen: row?.seen === true, ...(snapshot ? { snapshot } : {}) };
}
