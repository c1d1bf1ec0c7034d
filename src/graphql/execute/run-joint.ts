/**
 * resolveBatchesWithPoolText: several principals' batches (run-batch.ts) in one round trip, each
 * principal its own transaction of the one message — `<prepares>; begin; <prelude A>;
 * <statements A>; commit; begin; <prelude B>; …; commit` — so nothing a statement of one principal
 * sets (a transaction-local setting) reaches another's. Consecutive batches of the same principal
 * (the same object) share their transaction and its prelude. Realtime's refresh sends the groups
 * whose claims differ this way.
 *
 * Only batches ready to go are joined: their role's catalog is cached, every request is a query
 * that needs SQL (no errors before it, nothing refused). Any other batch, and every batch of a joint
 * message that failed (a schema change, a statement's error, a prepared statement lost), is answered
 * by resolveBatchOnPoolText alone, with its retries: an answer is the same either way.
 */
import type pg from 'pg';
import { isDatabaseUnavailable } from '../../db/connection-errors.js';
import { discardClient, withPooledClient } from '../../db/pooled-client.js';
import type { Principal } from '../../db/with-role.js';
import { BATCH_MAX, batchStatements, type BatchedStatements } from './batch-statements.js';
import { JSON_AS_TEXT } from './json-text.js';
import type { Request } from './plan.js';
import { forgetPrepared, segmentsFor } from './prepared.js';
import { variablesError } from './request-input.js';
import { partsOf, resolveBatchOnPoolText, settle, type BatchOptions, type Part } from './run-batch.js';
import { cachedState, guardedPrelude, outcomeText, type Outcome, type PoolState } from './run-pool.js';

export interface PrincipalBatch {
  principal: Principal;
  reqs: readonly Request[];
}

/** A batch ready to join a message. */
interface Joinable {
  index: number;
  /** Its requests. */
  count: number;
  principal: Principal;
  state: PoolState;
  parts: Map<number, Part>;
  batched: BatchedStatements;
}

/** Each batch's response bodies, as resolveBatchOnPoolText answers them, in the batches' order. */
export async function resolveBatchesOnPoolText(
  pool: pg.Pool,
  batches: readonly PrincipalBatch[],
  opts: BatchOptions = {},
): Promise<string[][]> {
  const out: (string[] | undefined)[] = new Array(batches.length).fill(undefined);
  const joinable = batches
    .map((b, index) => joinableOf(pool, b, index, opts.maxPerStatement ?? BATCH_MAX))
    .filter((j): j is Joinable => j !== undefined);
  if (joinable.length > 1) {
    const answered = await runJoint(pool, joinable, opts.genericPlans === true);
    if (answered) {
      opts.onStatements?.(joinable.reduce((n, j) => n + j.batched.statements.length, 0));
      for (const [k, outcomes] of answered) out[k] = await Promise.all(outcomes.map(outcomeText));
    }
  }
  for (let k = 0; k < batches.length; k++) {
    if (out[k]) continue;
    const b = batches[k] as PrincipalBatch;
    out[k] = await resolveBatchOnPoolText(pool, b.principal, b.reqs, opts);
  }
  return out as string[][];
}

function joinableOf(pool: pg.Pool, b: PrincipalBatch, index: number, max: number): Joinable | undefined {
  const state = cachedState(pool, b.principal);
  if (!state || !b.reqs.length || b.reqs.some((r) => variablesError(r.variables))) return undefined;
  const { parts, alone, items, guarded } = partsOf(
    state.entry,
    b.reqs,
    b.reqs.map((_, i) => i),
  );
  // Only queries whose every request runs SQL, without errors of its own or unfit values.
  if (alone.length || !items.length || guarded || [...parts.values()].some((p) => p.kind !== 'statements'))
    return undefined;
  return {
    index,
    count: b.reqs.length,
    principal: b.principal,
    state,
    parts,
    batched: batchStatements(items, max),
  };
}

/** The joint message's outcomes per batch index; undefined when it failed (each batch runs alone). */
async function runJoint(
  pool: pg.Pool,
  joint: readonly Joinable[],
  genericPlans: boolean,
): Promise<Map<number, Outcome[]> | undefined> {
  try {
    // Runs of consecutive batches of one principal: one transaction each.
    const runs: Joinable[][] = [];
    for (const j of joint) {
      const last = runs[runs.length - 1];
      if (last && (last[0] as Joinable).principal === j.principal) last.push(j);
      else runs.push([j]);
    }
    return await withPooledClient(pool, async (client) => {
      const batch = segmentsFor(
        pool,
        client,
        runs.map((run) => ({
          prelude: guardedPrelude((run[0] as Joinable).principal, (run[0] as Joinable).state, genericPlans),
          items: run.flatMap((j) => j.batched.statements),
        })),
      );
      const text = [
        ...batch.before,
        ...batch.segments.flatMap((s) => ['begin', s.prelude, ...s.statements, 'commit']),
      ].join('; ');
      let results: pg.QueryResult[];
      try {
        const res = (await client.query({ text, types: JSON_AS_TEXT })) as unknown as
          | pg.QueryResult[]
          | pg.QueryResult;
        results = Array.isArray(res) ? res : [res];
        batch.commit();
      } catch (err) {
        // Earlier segments committed (read only); the failed one's transaction is open.
        forgetPrepared(client);
        await client.query('rollback; deallocate all').catch((e: unknown) => discardClient(client, e));
        throw err;
      }
      const answered = new Map<number, Outcome[]>();
      let at = batch.before.length;
      for (const run of runs) {
        // Each transaction's results: begin, prelude, its batches' statements in order, commit.
        at += 2;
        for (const j of run) {
          const n = j.batched.statements.length;
          const outcomes: (Outcome | undefined)[] = new Array(j.count).fill(undefined);
          settle(outcomes, j.parts, j.state.entry, j.batched.texts(results.slice(at, at + n)));
          answered.set(j.index, outcomes as Outcome[]);
          at += n;
        }
        at += 1;
      }
      return answered;
    });
  } catch (e) {
    if (isDatabaseUnavailable(e)) throw e;
    return undefined;
  }
}
