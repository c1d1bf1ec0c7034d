/**
 * resolveBatchWithPoolText: many requests (typically one document with different variables, as
 * realtime's live queries refresh them), each answered exactly as resolveOnPoolText answers it
 * alone, in one round trip and as few statements as possible.
 *
 * One message: `begin; <prelude: role, claims, version guard>; <statements>; commit`, the statements
 * being every query's SQL items, those of the same text run together (batch-statements.ts: one
 * statement per text and parameter set, or one lateral statement for up to BATCH_MAX sets). Answers
 * that need no statement (errors, introspection) stand when the message's guard passed, as the
 * version check stands for them alone. A schema change reloads the catalog and plans again (as
 * alone, ATTEMPTS times at most). A message that fails otherwise is sent again with every parameter
 * set as its own statement, when it joined sets (a statement timeout then applies to each set, as
 * alone; and a lateral form PostgreSQL would refuse cannot cost an answer); one that still fails
 * (a value PostgreSQL refuses) is sent again for each half of its requests, down to a request alone,
 * so each request gets the error it would get alone and the others their answers. Mutations run alone.
 * Cancel signals are not used by the batched message (a request alone still uses its own).
 */
import type pg from 'pg';
import { isDatabaseUnavailable } from '../../db/connection-errors.js';
import type { Principal } from '../../db/with-role.js';
import { BATCH_MAX, batchStatements, type Statement } from './batch-statements.js';
import { planFor, type CatalogEntry } from './cache.js';
import type { Plan, Request } from './plan.js';
import { stopPreparing } from './prepared.js';
import { variablesError } from './request-input.js';
import { sqlErrorResponse, sqlItems, textParamsError } from './respond.js';
import {
  ATTEMPTS,
  cachedState,
  guardedPrelude,
  isSchemaFree,
  loadState,
  outcomeText,
  retryReason,
  runPrepared,
  runRequest,
  transactionText,
  type Outcome,
  type PoolState,
} from './run-pool.js';

export interface BatchOptions {
  /** Most parameter sets in one statement (BATCH_MAX). */
  maxPerStatement?: number;
  /** Told how many statements each message sent carries (a caller's counters). */
  onStatements?: (count: number) => void;
  /**
   * The same documents run again and again with other values (realtime): prepared statements use
   * generic plans only (run-pool.ts GENERIC_PRELUDE_SQL).
   */
  genericPlans?: boolean;
}

interface BatchLimits {
  max: number;
  onStatements?: (count: number) => void;
  genericPlans?: boolean;
}

/** Each request's response body as resolveOnPoolText gives it, in the requests' order. */
export async function resolveBatchOnPoolText(
  pool: pg.Pool,
  principal: Principal,
  reqs: readonly Request[],
  opts: BatchOptions = {},
): Promise<string[]> {
  const outcomes = await runBatch(pool, principal, reqs, {
    max: opts.maxPerStatement ?? BATCH_MAX,
    onStatements: opts.onStatements,
    genericPlans: opts.genericPlans,
  });
  return Promise.all(outcomes.map(outcomeText));
}

type RunnablePlan = Extract<Plan, { kind: 'plan' }>;

/** A request's part of the message: an answer that stands once the guard passed, or SQL items. */
export type Part =
  | { kind: 'answer'; outcome: Outcome }
  | { kind: 'statements'; plan: RunnablePlan; first: number; count: number };

const object = (response: Record<string, unknown>): Outcome => ({ kind: 'object', response });

/** The message's parts for `pending` against `entry`; mutations are left to run alone. */
export function partsOf(entry: CatalogEntry, reqs: readonly Request[], pending: readonly number[]) {
  const parts = new Map<number, Part>();
  const alone: number[] = [];
  const items: Statement[] = [];
  let guarded = false;
  for (const i of pending) {
    const plan = planFor(entry, reqs[i] as Request);
    if (plan.kind === 'plan' && plan.operation === 'mutation') {
      alone.push(i);
      continue;
    }
    const sql = plan.kind === 'plan' ? sqlItems(plan) : [];
    if (plan.kind === 'response' || !sql.length) {
      // Computed from the cached schema: the guard confirms its version (as alone, unless schema-free).
      if (!isSchemaFree(plan)) guarded = true;
      const outcome: Outcome =
        plan.kind === 'response' ? object(plan.response) : { kind: 'texts', plan, texts: [], entry };
      parts.set(i, { kind: 'answer', outcome });
      continue;
    }
    if (plan.errors.length) guarded = true;
    const unfit = textParamsError(sql);
    if (unfit) {
      parts.set(i, { kind: 'answer', outcome: object(sqlErrorResponse(unfit)) });
      continue;
    }
    parts.set(i, { kind: 'statements', plan, first: items.length, count: sql.length });
    items.push(...sql.map((it) => it.compiled));
  }
  return { parts, alone, items, guarded };
}

/** Every part's outcome, the SQL items' JSON texts being `texts` (or the message's error). */
export function settle(
  out: (Outcome | undefined)[],
  parts: Map<number, Part>,
  entry: CatalogEntry,
  texts: string[] | { error: unknown },
): void {
  for (const [i, part] of parts) {
    if (part.kind === 'answer') out[i] = part.outcome;
    else if (Array.isArray(texts))
      out[i] = {
        kind: 'texts',
        plan: part.plan,
        texts: texts.slice(part.first, part.first + part.count),
        entry,
      };
    else out[i] = object(sqlErrorResponse(texts.error));
  }
}

async function runBatch(
  pool: pg.Pool,
  principal: Principal,
  reqs: readonly Request[],
  limits: BatchLimits,
): Promise<Outcome[]> {
  if (reqs.length === 1) {
    limits.onStatements?.(1);
    return [await runRequest(pool, principal, reqs[0] as Request)];
  }
  const out: (Outcome | undefined)[] = new Array(reqs.length).fill(undefined);
  const pending: number[] = [];
  reqs.forEach((req, i) => {
    const refused = variablesError(req.variables);
    if (refused) out[i] = object(refused);
    else pending.push(i);
  });
  const callbacks = new Set(reqs.map((r) => r.onCatalogNotices).filter((f) => f !== undefined));
  const onNotices = callbacks.size
    ? (notices: string[]) => {
        for (const f of callbacks) f(notices);
      }
    : undefined;
  let state: PoolState | undefined = cachedState(pool, principal);
  let alone: number[] = [];
  for (let attempt = 0; attempt < ATTEMPTS && pending.length; attempt++) {
    const more = attempt < ATTEMPTS - 1;
    try {
      state ??= await loadState(pool, principal, onNotices);
    } catch (e) {
      const failed = object(sqlErrorResponse(e));
      for (const i of pending) out[i] = failed;
      break;
    }
    const entry = state.entry;
    const message = partsOf(entry, reqs, pending);
    alone = message.alone;
    const { parts, items } = message;
    if (!items.length && !message.guarded) {
      settle(out, parts, entry, []);
      break;
    }
    const batched = batchStatements(items, limits.max);
    limits.onStatements?.(batched.statements.length);
    try {
      const results = await runPrepared(
        pool,
        guardedPrelude(principal, state, limits.genericPlans),
        batched.statements,
        transactionText,
      );
      // The statements' results come last, before commit's.
      const first = results.length - 1 - batched.statements.length;
      settle(out, parts, entry, batched.texts(results.slice(first, first + batched.statements.length)));
      break;
    } catch (e) {
      if (isDatabaseUnavailable(e)) throw e;
      const retry = retryReason(e);
      if (more && retry === 'prepared') stopPreparing(pool);
      if (more && retry === 'version') state = undefined;
      if (more && retry) continue;
      // The schema kept changing: the statements fail with its error, the other answers stand (as alone).
      if (retry === 'version') settle(out, parts, entry, { error: e });
      else if (batched.lateral)
        await answerAgain(pool, principal, reqs, [...parts.keys()], { ...limits, max: 1 }, out, 1);
      else await answerAgain(pool, principal, reqs, [...parts.keys()], limits, out, 2);
      break;
    }
  }
  for (const i of alone) out[i] = await runRequest(pool, principal, reqs[i] as Request);
  return out.map(
    (o) => o ?? object({ data: null, errors: [{ message: 'schema changed during the request; retry' }] }),
  );
}

/** The requests `indices` of a failed message, answered again in `pieces` parts (halves: a request alone at the end). */
async function answerAgain(
  pool: pg.Pool,
  principal: Principal,
  reqs: readonly Request[],
  indices: number[],
  limits: BatchLimits,
  out: (Outcome | undefined)[],
  pieces: 1 | 2,
): Promise<void> {
  const middle = pieces === 1 ? indices.length : Math.ceil(indices.length / 2);
  for (const half of [indices.slice(0, middle), indices.slice(middle)]) {
    if (!half.length) continue;
    const answers = await runBatch(
      pool,
      principal,
      half.map((i) => reqs[i] as Request),
      limits,
    );
    half.forEach((i, k) => {
      out[i] = answers[k];
    });
  }
}
