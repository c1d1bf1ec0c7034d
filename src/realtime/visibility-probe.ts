/**
 * Groups a commit cannot reach: before a refresh re-runs the groups its commits hit, it asks, as
 * each group's principal, whether the rows those commits inserted are visible to it. A group
 * whose every changed table saw only INSERTs of rows it cannot see, or UPDATEs that changed no
 * column the table's policies read of rows it cannot see (so could not see before either), is left
 * alone: under row-level security such a row is no row to any statement of that principal
 * (read-set.ts ProbeTarget says which tables qualify). An org-wide live query keyed by an org claim then re-runs for the org
 * that can see the new row, not for every org.
 *
 * One probe per (table, role, the claims its policies read), shared by every group that agrees on
 * them; all of a refresh's probes go in one round trip and one read-only transaction, each
 * statement after its own principal's settings (db/with-role.ts). Asked only after a snapshot was seen to hold the commits
 * (live-queries.ts), so "not visible" is never "not yet visible". Anything not known — a DELETE,
 * an UPDATE without its old row or of a policy's column, a row without its key, a table without a
 * ProbeTarget, a probe that failed — runs the group as before.
 */
import type pg from 'pg';
import type { Principal } from '../db/with-role.js';
import { rolePreludeParams, rolePreludeStatement } from '../db/with-role.js';
import { discardClient, withPooledClient } from '../db/pooled-client.js';
import { quoteIdent } from '../db/sql-text.js';
import { forgetPrepared, segmentsFor } from '../graphql/engine.js';
import { toArrayLiteral } from '../graphql/plan/values.js';
import { tableKey, type Commit } from './change-feed.js';
import { pickClaims, type Group, type VarSet } from './live-groups.js';
import { EXACT_COLUMN_TYPES } from './policy-facts.js';
import { valuesKey, type ProbeAnswers } from './probe-answers.js';
import type { ProbeTarget } from './read-set.js';

/** Probes per round trip (each two statements of one simple-protocol message). */
const PROBES_PER_MESSAGE = 64;
/** More rows of one table in a refresh than this: not probed (the groups run, as without probes). */
const MAX_PROBE_ROWS = 256;

type Row = Record<string, string | null | undefined>;

/**
 * Per table changed by the commits: its INSERTs and its UPDATEs with both rows logged (REPLICA
 * IDENTITY FULL), or `mixed` when anything else changed it (a DELETE, an UPDATE without its old row,
 * a TRUNCATE, a commit without its rows).
 */
type TableChanges = Map<string, { rows: { new: Row; old?: Row }[]; mixed: boolean }>;

function changesOf(commits: readonly Commit[]): TableChanges | undefined {
  const out: TableChanges = new Map();
  const entry = (t: string) => {
    let e = out.get(t);
    if (!e) {
      e = { rows: [], mixed: false };
      out.set(t, e);
    }
    return e;
  };
  for (const c of commits) {
    if (c.anyTable) return undefined;
    if (!c.changes) {
      for (const t of c.tables) entry(t).mixed = true;
      continue;
    }
    for (const ch of c.changes) {
      const e = entry(tableKey(ch.schema, ch.table));
      if (ch.op === 'INSERT' && ch.new) e.rows.push({ new: ch.new });
      else if (ch.op === 'UPDATE' && ch.new && ch.old) e.rows.push({ new: ch.new, old: ch.old });
      else e.mixed = true;
    }
    // A table named by the commit without a row change of its own (not expected): not known.
    for (const t of c.tables) if (!out.has(t)) entry(t).mixed = true;
  }
  return out;
}

/**
 * Whether the changes' rows were invisible before if they are now: INSERTs, and UPDATEs that left
 * every column the table's policies read as it was (a row's visibility is a function of those
 * columns, of other tables and of the claims; those other tables' changes are judged on their own).
 */
function probeable(rows: { new: Row; old?: Row }[], target: ProbeTarget): boolean {
  const columns = target.policyColumns;
  for (const r of rows) {
    if (!r.old) continue;
    if (columns === 'all') return false;
    for (const c of columns) {
      const before = r.old[c];
      const after = r.new[c];
      if (before === undefined || after === undefined || before !== after) return false;
    }
  }
  return true;
}

interface Probe {
  principal: Principal;
  /** Its statement (probeSql): one text per table, the keys its parameters. */
  sql: string;
  params: string[];
  visible?: boolean;
  /** The rows asked, by position (1-based) in the statement's lists: those it answered visible. */
  seen?: Set<number>;
  /** Where its answers are kept (a steady table): the key of each row asked, in order. */
  keep?: {
    table: string;
    target: NonNullable<ProbeTarget['steady']>;
    keys: (string | undefined)[];
    askedAt: number;
  };
}

/**
 * The positions of the rows (in the key lists) that the principal can see, as one statement text
 * per table (its key lists are parameters: a prepared statement serves every probe of the table);
 * undefined when a row lacks a key value.
 */
function probeSql(target: ProbeTarget, rows: readonly Row[]): { sql: string; params: string[] } | undefined {
  const lists: string[][] = target.key.map(() => []);
  const casts: string[] = [];
  for (const [i, k] of target.key.entries()) {
    const cast = EXACT_COLUMN_TYPES[k.type]?.cast;
    if (!cast) return undefined;
    casts.push(cast);
    for (const row of rows) {
      const v = row[k.column];
      if (typeof v !== 'string') return undefined;
      (lists[i] as string[]).push(v);
    }
  }
  const table = `${quoteIdent(target.schema)}.${quoteIdent(target.name)}`;
  const columns = target.key.map((k) => quoteIdent(k.column));
  const keys = columns.map((_, i) => `k.k${i}`);
  const match =
    columns.length === 1 ? `${columns[0]} = ${keys[0]}` : `(${columns.join(', ')}) = (${keys.join(', ')})`;
  return {
    sql:
      `select coalesce(pg_catalog.array_agg(k.n), '{}') as visible from unnest(${casts.map((c, i) => `$${i + 1}::${c}[]`).join(', ')})` +
      ` with ordinality as k(${keys.map((_, i) => `k${i}`).join(', ')}, n) where exists (select 1 from ${table} where ${match})`,
    params: lists.map((l) => toArrayLiteral(l)),
  };
}

/** A probe's settings: the statement the engine's messages start with (role, claims, timeout). */
const PRELUDE = rolePreludeStatement();

/**
 * Asks the probes, PROBES_PER_MESSAGE per round trip, each message one read-only transaction in
 * which every probe first sets its own role, claims and statement timeout (set_config('role', …,
 * true) is SET LOCAL ROLE, checked against the login's memberships); the statements are prepared
 * on the connection from their second sighting, as the engine's are (execute/prepared.ts). The
 * first message starts with `preface` (the refresh's snapshot check, before any probe's snapshot)
 * and answers its row. `ok` is false when a message failed.
 */
async function ask(
  pool: pg.Pool,
  probes: readonly Probe[],
  preface?: string,
): Promise<{ ok: boolean; preface?: Record<string, unknown> }> {
  let prefaceRow: Record<string, unknown> | undefined;
  for (let i = 0; i < probes.length; i += PROBES_PER_MESSAGE) {
    const chunk = probes.slice(i, i + PROBES_PER_MESSAGE);
    const lead = i === 0 && preface ? [preface] : [];
    const ok = await withPooledClient(pool, async (client) => {
      const batch = segmentsFor(
        pool,
        client,
        chunk.map((p) => ({
          prelude: { sql: PRELUDE, params: rolePreludeParams(p.principal) },
          items: [{ sql: p.sql, params: p.params }],
        })),
      );
      const text = [
        ...lead,
        ...batch.before,
        'begin read only',
        ...batch.segments.flatMap((s) => [s.prelude, ...s.statements]),
        'commit',
      ].join('; ');
      let results: pg.QueryResult[];
      try {
        results = (await client.query(text)) as unknown as pg.QueryResult[];
        batch.commit();
      } catch (e) {
        forgetPrepared(client);
        await client.query('rollback; deallocate all').catch((err: unknown) => discardClient(client, err));
        throw e;
      }
      if (lead.length) prefaceRow = results[0]?.rows[0];
      // The preface, the prepares, begin, then per probe its settings and itself.
      const first = lead.length + batch.before.length + 1;
      chunk.forEach((p, j) => {
        const seen: unknown = results[first + j * 2 + 1]?.rows[0]?.visible;
        // Not the answer this asks for: visible, as when nothing is known.
        if (!Array.isArray(seen)) p.visible = true;
        else {
          p.seen = new Set(seen.map(Number));
          p.visible = p.seen.size > 0;
        }
      });
      return true;
    }).catch(() => false);
    if (!ok) return { ok: false, preface: prefaceRow };
  }
  return { ok: true, preface: prefaceRow };
}

/** The probes a refresh's commits call for, and the groups each would leave alone. */
export interface ProbePlan {
  probes: Probe[];
  candidates: { group: Group; probes: Probe[] }[];
}

/**
 * The probes that could leave groups of `runs` alone (see above); undefined when there are none.
 * Ask them with askProbes once the commits are seen in a snapshot, then applyProbes (and
 * keepAnswers). A steady table's rows whose answer `answers` holds are not asked again: a probe
 * all of whose rows are known is answered without asking.
 */
export function planProbes(
  runs: Map<Group, Set<VarSet>>,
  commits: readonly Commit[],
  answers?: ProbeAnswers,
): ProbePlan | undefined {
  const changes = changesOf(commits);
  if (!changes) return undefined;
  const probes = new Map<string, Probe>();
  const candidates: ProbePlan['candidates'] = [];
  groups: for (const [group, sets] of runs) {
    const mine = new Map<string, Probe>();
    for (const set of sets) {
      if (set.scope.any) continue groups;
      for (const t of set.scope.tables) {
        const change = changes.get(t);
        if (!change) continue;
        const target = set.scope.probes?.get(t);
        if (change.mixed || !target || !change.rows.length || change.rows.length > MAX_PROBE_ROWS)
          continue groups;
        const key = JSON.stringify([
          group.principal.role,
          t,
          pickClaims(group.principal.claims, target.claims),
        ]);
        let probe = probes.get(key);
        if (!probe) {
          if (!probeable(change.rows, target)) continue groups;
          const made = makeProbe(group, target, key, set.scope.version, change.rows, answers);
          if (made === undefined) continue groups;
          probe = made;
          probes.set(key, probe);
        }
        mine.set(key, probe);
      }
    }
    if (mine.size) candidates.push({ group, probes: [...mine.values()] });
  }
  const asked = [...probes.values()].filter((p) => p.visible === undefined);
  return candidates.length ? { probes: asked, candidates } : undefined;
}

/**
 * A table's probe for one principal: its rows' answers from `answers` where the table is steady
 * (answered without asking when they are all known), the statement for the rest.
 */
function makeProbe(
  group: Group,
  target: ProbeTarget,
  key: string,
  version: number | undefined,
  rows: readonly { new: Row }[],
  answers: ProbeAnswers | undefined,
): Probe | undefined {
  let ask = rows.map((r) => r.new);
  let keep: Probe['keep'];
  if (answers && target.steady && version !== undefined) {
    const steady = target.steady;
    const askedAt = answers.watch(target.table, steady);
    const prefix = JSON.stringify([version, key]);
    const keys = ask.map((row) => {
      const values = valuesKey(row, steady.columns);
      return values === undefined ? undefined : `${prefix}${values}`;
    });
    const known = keys.map((k) => (k === undefined ? undefined : answers.get(target.table, k)));
    if (known.some((v) => v === true))
      return { principal: group.principal, sql: '', params: [], visible: true };
    const unknown = ask.flatMap((_, i) => (known[i] === undefined ? [i] : []));
    if (!unknown.length) return { principal: group.principal, sql: '', params: [], visible: false };
    ask = unknown.map((i) => ask[i] as Row);
    keep = {
      table: target.table,
      target: steady,
      keys: unknown.map((i) => keys[i]),
      askedAt,
    };
  }
  const statement = probeSql(target, ask);
  if (statement === undefined) return undefined;
  return { principal: group.principal, ...statement, keep };
}

/**
 * Keeps the answers of a plan's probes of steady tables (call once the snapshot the probes ran in
 * was seen to hold the commits, as for applyProbes): per key, visible when any row of it was.
 */
export function keepAnswers(plan: ProbePlan, answers: ProbeAnswers): void {
  for (const p of plan.probes) {
    if (!p.keep || !p.seen) continue;
    const byKey = new Map<string, boolean>();
    p.keep.keys.forEach((k, i) => {
      if (k !== undefined) byKey.set(k, (byKey.get(k) ?? false) || (p.seen as Set<number>).has(i + 1));
    });
    for (const [k, visible] of byKey) answers.keep(p.keep.table, p.keep.target, k, visible, p.keep.askedAt);
  }
}

/**
 * Asks a plan's probes, after `preface` in the same round trip (the snapshot check: its row is
 * answered). False `ok`: a probe failed, and the plan must not be applied.
 */
export function askProbes(
  pool: pg.Pool,
  plan: ProbePlan,
  preface?: string,
): Promise<{ ok: boolean; preface?: Record<string, unknown> }> {
  return ask(pool, plan.probes, preface);
}

/**
 * Removes from `runs` the groups whose every probe answered "not visible" (asked once the commits
 * were seen in a snapshot); answers how many variable sets were left alone.
 */
export function applyProbes(runs: Map<Group, Set<VarSet>>, plan: ProbePlan): number {
  let dropped = 0;
  for (const c of plan.candidates) {
    if (c.probes.some((p) => p.visible !== false)) continue;
    dropped += runs.get(c.group)?.size ?? 0;
    runs.delete(c.group);
  }
  return dropped;
}
