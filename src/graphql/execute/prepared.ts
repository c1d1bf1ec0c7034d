/**
 * Server-side prepared statements for the one-message fast path. A statement text seen a second
 * time is sent as `prepare <name> as <sql>` ahead of the transaction in the same message, then run
 * with `execute <name>(<literals>)`; later requests on that connection only send the `execute`.
 * PostgreSQL then skips parse analysis and, once it settles on a generic plan, planning — about
 * 40% of a nested statement's database time — while the request stays one round trip.
 * Plans are replanned by PostgreSQL itself when the role (RLS) or the schema changes.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { quoteLiteral } from '../../db/sql-text.js';
import { inlineParams } from '../transpile/sql-text.js';

/**
 * Pools whose connections do not keep session state from one transaction to the next (a
 * transaction-mode pooler such as PgBouncer or Supavisor on port 6543 between Strata and
 * PostgreSQL): a prepared statement seen missing, or already there, says so. Their requests run
 * with every value inlined, nothing prepared.
 */
const unprepared = new WeakSet<object>();

/** SQLSTATEs of a prepared statement the session does not have (26000) or already has (42P05). */
export function isPreparedStateLost(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === '26000' || code === '42P05';
}

/** From now on, `pool`'s requests prepare nothing (see `unprepared`). */
export function stopPreparing(pool: object): void {
  unprepared.add(pool);
}

/** Per connection: the statement names prepared on it. */
const preparedOn = new WeakMap<pg.ClientBase, Set<string>>();
/** Statement text → [name, times seen]; bounded. */
const seen = new Map<string, { name: string; count: number }>();
const SEEN_MAX = 5_000;
/** More than this many on one connection: deallocate all and start again. */
const PER_CONNECTION_MAX = 200;

export interface StatementBatch {
  /** Statements to run before `begin` (deallocate/prepare). */
  before: string[];
  /** The prelude's `execute ...`, to run right after `begin`. */
  prelude: string;
  /** One statement per item, in order: `execute ...` or the SQL with inlined literals. */
  statements: string[];
  /** Call after the message succeeded. */
  commit(): void;
}

function track(sql: string): { name: string; count: number } {
  let s = seen.get(sql);
  if (!s) {
    if (seen.size >= SEEN_MAX) seen.clear();
    s = { name: 'strata_' + createHash('sha1').update(sql).digest('hex').slice(0, 24), count: 0 };
    seen.set(sql, s);
  }
  s.count++;
  return s;
}

/**
 * The text a statement is prepared as. A query of the transpiler's scalar form (`select (…)`, one
 * row, one column) is prepared as `select * from (…) as __strata_q`: at every EXECUTE PostgreSQL
 * copies the prepared statement's target list to describe its result
 * (FetchPreparedStatementTargetList), and the scalar form's target list is the whole query tree;
 * wrapped it is one column reference, and the planner pulls the subquery up (the same plan). That
 * copy was ~4.5 % of the pooled backends' time in the realtime bench's profile.
 */
function preparedText(sql: string): string {
  return sql.startsWith('select (') ? `select * from (${sql}) as __strata_q` : sql;
}

function executeSql(name: string, params: readonly (string | null)[]): string {
  return params.length
    ? `execute ${name}(${params.map((v) => (v === null ? 'NULL' : quoteLiteral(v))).join(', ')})`
    : `execute ${name}`;
}

/** The names prepared on `client` (an empty set, remembered, for a new connection). */
function preparedSet(client: pg.ClientBase): Set<string> {
  let set = preparedOn.get(client);
  if (!set) {
    set = new Set();
    preparedOn.set(client, set);
  }
  return set;
}

type Item = { sql: string; params: readonly (string | null)[] };

/**
 * The message's statements for `client`: `prelude` (run once per request, so prepared at once) and
 * the items (prepared from their second sighting).
 */
export function batchFor(
  pool: object,
  client: pg.ClientBase,
  prelude: Item,
  items: ReadonlyArray<Item>,
): StatementBatch {
  const joint = segmentsFor(pool, client, [{ prelude, items }]);
  const only = joint.segments[0] as { prelude: string; statements: string[] };
  return { before: joint.before, prelude: only.prelude, statements: only.statements, commit: joint.commit };
}

/** Several transactions of one message (each its prelude and items): what batchFor gives one. */
export interface SegmentsBatch {
  /** Statements to run before the first `begin` (deallocate/prepare for every segment). */
  before: string[];
  segments: { prelude: string; statements: string[] }[];
  /** Call after the message succeeded. */
  commit(): void;
}

/** batchFor for several segments sent in one message: a statement is prepared once for all of them. */
export function segmentsFor(
  pool: object,
  client: pg.ClientBase,
  segments: ReadonlyArray<{ prelude: Item; items: ReadonlyArray<Item> }>,
): SegmentsBatch {
  if (unprepared.has(pool))
    return {
      before: [],
      segments: segments.map(({ prelude, items }) => ({
        prelude: inlineParams(prelude.sql, prelude.params),
        statements: items.map(({ sql, params }) => inlineParams(sql, params)),
      })),
      commit: () => {},
    };
  const set = preparedSet(client);
  const before: string[] = [];
  const added = new Set<string>();
  if (set.size >= PER_CONNECTION_MAX) {
    before.push('deallocate all');
    set.clear();
  }
  const prepare = (sql: string, name: string) => {
    before.push(`prepare ${name} as ${sql}`);
    added.add(name);
  };
  const out = segments.map(({ prelude, items }) => {
    const p = track(prelude.sql);
    if (!set.has(p.name) && !added.has(p.name)) prepare(prelude.sql, p.name);
    const statements = items.map(({ sql, params }) => {
      const t = track(sql);
      if (set.has(t.name) || added.has(t.name)) return executeSql(t.name, params);
      if (t.count >= 2) {
        prepare(preparedText(sql), t.name);
        return executeSql(t.name, params);
      }
      return inlineParams(sql, params);
    });
    return { prelude: executeSql(p.name, prelude.params), statements };
  });
  return {
    before,
    segments: out,
    commit: () => {
      for (const n of added) set.add(n);
    },
  };
}

/** After a failed message nothing is known of what it prepared: start the connection afresh. */
export function forgetPrepared(client: pg.ClientBase): void {
  preparedOn.get(client)?.clear();
}
