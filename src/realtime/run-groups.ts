/**
 * A refresh's statements: each group's variable sets in one batch (the engine's
 * resolveBatchesWithPoolText: one statement per SQL text, several groups per round trip), at most
 * `concurrency` messages at once, and the results pushed to the subscribers whose hash they change.
 * A narrow group's results (its key holds only some claims) are handed back instead: they are
 * pushed only once the schema version they were keyed at is confirmed (live-queries.ts).
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Principal } from '../db/with-role.js';
import type { ClaimsRead } from './claims-read.js';
import { pickClaims, type Group, type VarSet } from './live-groups.js';
import { resolveBatchesWithPoolText } from '../graphql/engine.js';
import { RawResult } from './raw-result.js';
import {
  mergedResult,
  wholeResult,
  type ChangedKeys,
  type NewestBase,
  type RowsDocument,
} from './newest-rows.js';

export interface Ran {
  set: VarSet;
  text: string;
  /** The base of later merges this result makes (newest-rows.ts), when it is one. */
  base?: NewestBase;
}

export interface RunCounts {
  executions: number;
  refreshedSets: number;
  /** Sets refreshed by merging their changed rows in (newest-rows.ts). */
  merged: number;
}

/** Pushes each result to its set's subscribers (a subscriber gets it only if it differs from their last). */
export function publish(results: Ran[]): void {
  for (const { set, text, base } of results) {
    if (set.dead) continue;
    set.base = base;
    const hash = createHash('sha256').update(text).digest('base64');
    if (set.last?.hash !== hash) set.last = { result: new RawResult(text), hash };
    const last = set.last;
    for (const m of set.members) m.stream.push(last.result, last.hash);
  }
}

/** Most groups in one round trip. */
const GROUPS_PER_MESSAGE = 8;

/** Sets of a group to refresh: whole, or (`rows`) by the changed rows of these keys only. */
export interface GroupRun {
  g: Group;
  sets: VarSet[];
  rows?: { doc: RowsDocument; changed: ChangedKeys; keys: (number | string)[] };
}

/** Groups that run as one principal, in one transaction. */
interface Bucket {
  principal: Principal;
  runs: GroupRun[];
}

/**
 * The groups in buckets of one principal each: a group joins the first bucket whose principal has
 * the role and the values of the claims the group's key holds (its results are the same under it,
 * live-groups.ts), else starts one with its own. An org's documents then run in one transaction
 * of the org's claims rather than one per document. Buckets are indexed per set of claim paths
 * (few: one per document and role), so a refresh of many per-user groups is not quadratic.
 */
export function sharedPrincipals(runs: readonly GroupRun[]): Bucket[] {
  const buckets: Bucket[] = [];
  /** Per set of claim paths: (role, those claims' values) → the first bucket that has them. */
  const indexes = new Map<string, { claims: ClaimsRead; byKey: Map<string, Bucket> }>();
  const keyOf = (p: Principal, claims: ClaimsRead) => JSON.stringify([p.role, pickClaims(p.claims, claims)]);
  const enter = (index: { claims: ClaimsRead; byKey: Map<string, Bucket> }, b: Bucket) => {
    const k = keyOf(b.principal, index.claims);
    if (!index.byKey.has(k)) index.byKey.set(k, b);
  };
  for (const r of runs) {
    const claims = r.sets[0]?.scope.claims ?? 'all';
    const paths = claims === 'all' ? 'all' : JSON.stringify([...claims].sort());
    let index = indexes.get(paths);
    if (!index) {
      index = { claims, byKey: new Map() };
      for (const b of buckets) enter(index, b);
      indexes.set(paths, index);
    }
    const found = index.byKey.get(keyOf(r.g.principal, claims));
    if (found) {
      found.runs.push(r);
      continue;
    }
    const b: Bucket = { principal: r.g.principal, runs: [r] };
    buckets.push(b);
    for (const i of indexes.values()) enter(i, b);
  }
  return buckets;
}

/**
 * Runs the groups' sets, several groups per round trip (differing claims: each group its own
 * transaction of the message), at most `concurrency` messages at once; answers the narrow groups'
 * results, the sets whose run failed, those whose changed rows could not be merged (`whole`), and
 * the new bases that hold a count (they need a snapshot taken after them: NewestBase.upper).
 */
export async function runGroups(
  pool: pg.Pool,
  runs: Map<Group, Set<VarSet>>,
  concurrency: number,
  counts: RunCounts,
  rowRuns: readonly GroupRun[] = [],
): Promise<{ held: Ran[]; failed: VarSet[]; whole: VarSet[]; counting: NewestBase[] }> {
  const buckets = sharedPrincipals([...[...runs].map(([g, sets]) => ({ g, sets: [...sets] })), ...rowRuns]);
  const count = buckets.reduce((n, b) => n + b.runs.length, 0);
  const held: Ran[] = [];
  const failed: VarSet[] = [];
  const whole: VarSet[] = [];
  const counting: NewestBase[] = [];
  const workers = Math.min(concurrency, count);
  // Spread over the workers: a small refresh is not one message while connections stand idle.
  const perMessage = Math.max(1, Math.min(GROUPS_PER_MESSAGE, Math.ceil(count / Math.max(1, workers))));
  // A message's first bucket goes whole (up to GROUPS_PER_MESSAGE groups: a bucket is one
  // transaction and prelude, so splitting it only adds them), then more whole buckets while the
  // message holds fewer than `perMessage` groups.
  const take = (): { bucket: Bucket; runs: GroupRun[] }[] => {
    const out: { bucket: Bucket; runs: GroupRun[] }[] = [];
    let n = 0;
    while (buckets.length && n < perMessage) {
      const b = buckets[0] as Bucket;
      if (n && b.runs.length > perMessage - n) break;
      const part = b.runs.splice(0, GROUPS_PER_MESSAGE - n);
      if (!b.runs.length) buckets.shift();
      out.push({ bucket: b, runs: part });
      n += part.length;
    }
    return out;
  };
  const worker = async () => {
    for (let taken = take(); taken.length; taken = take()) {
      // The project's pool was closed (deleted or moved project, new JWT secret): the caller retires.
      if (pool.ending) return;
      const next = taken.flatMap((t) => t.runs);
      const batches = taken.flatMap(({ bucket, runs: part }) =>
        part.map(({ g, sets, rows }) => ({
          principal: bucket.principal,
          reqs: sets.map((s) =>
            rows
              ? {
                  query: rows.doc.query,
                  operationName: g.operationName,
                  variables: { ...s.variables, [rows.doc.variable]: rows.keys },
                }
              : { query: g.query, operationName: g.operationName, variables: s.variables },
          ),
        })),
      );
      for (const { sets } of next) counts.refreshedSets += sets.length;
      let texts: string[][];
      try {
        texts = await resolveBatchesWithPoolText(pool, batches, {
          // The same documents every refresh, other values: PostgreSQL plans each once.
          genericPlans: true,
          onStatements: (n) => {
            counts.executions += n;
          },
        });
      } catch {
        // The database is unreachable: the next refresh tries again.
        for (const { sets } of next) failed.push(...sets);
        continue;
      }
      next.forEach(({ g, sets, rows }, k) => {
        const out: Ran[] = [];
        sets.forEach((set, i) => {
          const r = resultOf(set, texts[k]?.[i] as string, rows?.changed);
          if (r) out.push(r);
          else whole.push(set);
          if (r?.base?.count !== undefined) counting.push(r.base);
        });
        if (rows) counts.merged += out.length;
        if (g.narrow) held.push(...out);
        else publish(out);
      });
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return { held, failed, whole, counting };
}

/**
 * A set's result from its statement's text: as it is; parsed as the base of later merges when the
 * set has an append shape; merged into its base for a run of changed rows (undefined when that
 * cannot be: the set runs whole next).
 */
function resultOf(set: VarSet, text: string, changed: ChangedKeys | undefined): Ran | undefined {
  const shape = set.scope.append;
  if (!shape) return { set, text };
  if (!changed) return { set, ...wholeResult(shape, text) };
  const m = set.base ? mergedResult(shape, set.base, changed, text) : undefined;
  return m ? { set, ...m } : undefined;
}
