/**
 * resolveWithPool: one simple-protocol message per request —
 * `begin; execute <prelude>(role, claims, version); <statements>; commit`, the prelude being one
 * select prepared once per connection that sets the role and claims and evaluates the version guard.
 * The guard raises (SQLSTATE GQLSV) before any statement runs when the schema version is not the
 * cached one; the catalog is then reloaded (one more round trip) and the request retried (twice at most).
 */
import { Kind } from 'graphql';
import type pg from 'pg';
import { rolePrelude, rolePreludeParams, rolePreludeStatement, type Principal } from '../../db/with-role.js';
import { firstRow } from '../../db/first-row.js';
import { discardClient, withPooledClient } from '../../db/pooled-client.js';
import { sendCancelRequest, type CancelSignal } from '../../db/cancel-request.js';
import { CATALOG_SQL } from '../introspect/catalog-sql.js';
import type { Catalog } from '../introspect/model.js';
import { buildCatalog } from '../introspect/load.js';
import { JSON_AS_TEXT, jsonTextOf, parseJsonText } from './json-text.js';
import {
  batchFor,
  forgetPrepared,
  isPreparedStateLost,
  stopPreparing,
  type StatementBatch,
} from './prepared.js';
import { catalogKey, getEntry, planFor, putEntry, schemaOf, type CatalogEntry } from './cache.js';
import type { Plan, Request } from './plan.js';
import { variablesError } from './request-input.js';
import { respond, respondText, sqlErrorResponse, sqlItems, textParamsError } from './respond.js';

export interface PoolState {
  entry: CatalogEntry;
  version: number;
}

const states = new WeakMap<pg.Pool, Map<string, PoolState>>();

/**
 * The schema-version guard ($4: the version the plan was compiled for). The fast path reads the
 * sequence with the built-in pg_sequence_last_value (SELECT on it is granted to PUBLIC); only when
 * that differs (or is null: the sequence never advanced) does the security-definer
 * graphql.strata_assert_schema_version decide, raising GQLSV on a real change.
 */
const VERSION_GUARD = `case when pg_sequence_last_value('graphql.seq_schema_version'::regclass) = $4::int then $4::int
  else graphql.strata_assert_schema_version($4::int) end`;
const PRELUDE_SQL = rolePreludeStatement([VERSION_GUARD]);
/**
 * The prelude of statements run again and again with other values (realtime's refreshes): generic
 * plans only. A lateral batch's custom plan (its arrays' lengths known) always looks cheaper than
 * the generic one, so PostgreSQL planned it anew at every run (1.3 ms of a 3 ms statement).
 */
const GENERIC_PRELUDE_SQL = rolePreludeStatement([
  VERSION_GUARD,
  "set_config('plan_cache_mode', 'force_generic_plan', true)",
]);

function isVersionChange(e: unknown): boolean {
  return (e as { code?: string }).code === 'GQLSV';
}

/** The state `principal`'s role last loaded on `pool`, if any. */
export function cachedState(pool: pg.Pool, principal: Principal): PoolState | undefined {
  return states.get(pool)?.get(principal.role);
}

/** The prelude statement of a message: role, claims and the guard of `state`'s version. */
export function guardedPrelude(principal: Principal, state: PoolState, genericPlans = false) {
  return {
    sql: genericPlans ? GENERIC_PRELUDE_SQL : PRELUDE_SQL,
    params: [...rolePreludeParams(principal), String(state.version)],
  };
}

/** The message of a transaction: what comes before it, then begin, the prelude, the statements, commit. */
export function transactionText(batch: StatementBatch): string {
  return [...batch.before, 'begin', batch.prelude, ...batch.statements, 'commit'].join('; ');
}

/**
 * Why a failed message may be sent again: prepared statements do not survive between transactions
 * (`prepared`: stop preparing), or the schema changed (`version`: reload the catalog, plan again).
 */
export function retryReason(e: unknown): 'prepared' | 'version' | undefined {
  if (isPreparedStateLost(e)) return 'prepared';
  if (isVersionChange(e) || isStaleGuard(e)) return 'version';
  return undefined;
}

/**
 * The engine's objects were replaced (extension upgrade: drop + create) while the transaction ran:
 * the prepared guard still named the dropped sequence. Deallocated with the failed message's
 * statements; the retry prepares it afresh.
 */
function isStaleGuard(e: unknown): boolean {
  return (
    (e as { code?: string }).code === 'XX000' &&
    /could not open relation with OID/.test(String((e as Error).message))
  );
}

const CONFIG_SQL = `select current_user::text as role, current_schemas(false)::text as search_path,
  (select oid::text from pg_database where datname = current_database()) || ':' || current_database() as db,
  graphql.get_schema_version()::int as version`;

async function multi(pool: pg.Pool, sql: string): Promise<pg.QueryResult[]> {
  // A failed message leaves its transaction open: withPooledClient rolls it back.
  return withPooledClient(pool, async (client) => {
    const res = (await client.query(sql)) as unknown as pg.QueryResult[] | pg.QueryResult;
    return Array.isArray(res) ? res : [res];
  });
}

/**
 * One message built for the connection it runs on (prepared statements are per connection). When
 * `cancelOn` aborts while it runs (the client is gone), the statement is cancelled and the
 * connection destroyed afterwards (db/cancel-request.ts says why).
 */
export function runPrepared(
  pool: pg.Pool,
  prelude: { sql: string; params: readonly (string | null)[] },
  items: ReadonlyArray<{ sql: string; params: readonly (string | null)[] }>,
  build: (batch: ReturnType<typeof batchFor>) => string,
  cancelOn?: CancelSignal,
): Promise<pg.QueryResult[]> {
  return withPooledClient(pool, async (client) => {
    if (cancelOn?.aborted) throw new Error(ABANDONED);
    const batch = batchFor(pool, client, prelude, items);
    const cancel = () => {
      discardClient(client, new Error(ABANDONED));
      void sendCancelRequest(client);
    };
    cancelOn?.addEventListener('abort', cancel, { once: true });
    try {
      // The statements' JSON stays text (json-text.ts): it is parsed only if an object is asked for.
      const res = (await client.query({ text: build(batch), types: JSON_AS_TEXT })) as unknown as
        | pg.QueryResult[]
        | pg.QueryResult;
      batch.commit();
      return Array.isArray(res) ? res : [res];
    } catch (err) {
      // What the failed message prepared is unknown: drop every prepared statement of the
      // connection, or the connection itself when that fails.
      forgetPrepared(client);
      await client.query('rollback; deallocate all').catch((e: unknown) => discardClient(client, e));
      throw err;
    } finally {
      cancelOn?.removeEventListener('abort', cancel);
    }
  });
}

const ABANDONED = 'the request was abandoned by its client; its statement was cancelled';

export async function loadState(
  pool: pg.Pool,
  principal: Principal,
  onNotices?: (notices: string[]) => void,
): Promise<PoolState> {
  // The catalog load is the platform's work, not the request's: like PostgREST's schema cache
  // load, it is not cut short by the role's statement_timeout (a large schema may need longer).
  const opening = rolePrelude(principal, { roleLimits: false });
  const results = await multi(pool, `${opening}; ${CONFIG_SQL}; ${CATALOG_SQL}; commit`);
  // begin, set role, set_config, then the config and catalog queries.
  const cfg = firstRow(results[3], 'the GraphQL config query');
  const key = catalogKey(cfg.db, cfg.role, cfg.search_path, cfg.version);
  let entry = getEntry(key);
  if (!entry) {
    entry = putEntry(key, buildCatalog(firstRow(results[4], 'the GraphQL catalog query').catalog));
    if (entry.catalog.notices.length) onNotices?.(entry.catalog.notices);
  }
  const state = { entry, version: Number(cfg.version) };
  let byRole = states.get(pool);
  if (!byRole) {
    byRole = new Map();
    states.set(pool, byRole);
  }
  byRole.set(principal.role, state);
  return state;
}

async function versionIs(pool: pg.Pool, version: number): Promise<boolean> {
  const { rows } = await pool.query('select graphql.get_schema_version()::int as v');
  return Number(rows[0].v) === version;
}

/**
 * Plans whose answer is the same under every schema version: a query that selects only
 * `__typename` at its root (`{ __typename }`, a common health check), with no fragments, variables,
 * directives or arguments that a schema could make invalid. Its answer is `"Query"` whatever the
 * catalog holds, so it needs neither a statement nor the schema-version check.
 */
export function isSchemaFree(plan: Plan): boolean {
  if (plan.kind !== 'plan' || plan.operation !== 'query' || plan.errors.length) return false;
  if (!plan.items.every((i) => i.kind === 'value')) return false;
  const { op, fragments } = plan.op;
  if (fragments.size || op.variableDefinitions?.length || op.directives?.length) return false;
  return op.selectionSet.selections.every(
    (s) =>
      s.kind === Kind.FIELD &&
      s.name.value === '__typename' &&
      !s.directives?.length &&
      !s.arguments?.length &&
      !s.selectionSet,
  );
}

/** A request's outcome: a response already complete, or the statements' JSON texts for a plan. */
export type Outcome =
  | { kind: 'object'; response: Record<string, unknown> }
  | { kind: 'texts'; plan: Extract<Plan, { kind: 'plan' }>; texts: string[]; entry: CatalogEntry };

/**
 * Tries per request: a schema change (DDL, a node bootstrapping, an extension upgrade) reloads the
 * catalog and plans again; two changes in a row (two nodes starting) still answer, a third fails
 * with the version error rather than looping.
 */
export const ATTEMPTS = 3;

export async function runRequest(pool: pg.Pool, principal: Principal, req: Request): Promise<Outcome> {
  const object = (response: Record<string, unknown>): Outcome => ({ kind: 'object', response });
  const refused = variablesError(req.variables);
  if (refused) return object(refused);
  let state = cachedState(pool, principal);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const more = attempt < ATTEMPTS - 1;
    try {
      state ??= await loadState(pool, principal, req.onCatalogNotices);
    } catch (e) {
      return object(sqlErrorResponse(e));
    }
    const entry = state.entry;
    const plan = planFor(entry, req);
    const items = plan.kind === 'plan' ? sqlItems(plan) : [];
    // Answers that need no statement (errors, introspection) were computed from the cached schema:
    // confirm its version first (one round trip, only on these paths), unless the answer is the same
    // under every version (isSchemaFree).
    if (plan.kind === 'response' || !items.length || plan.errors.length) {
      if (more && !isSchemaFree(plan) && !(await versionIs(pool, state.version))) {
        state = undefined;
        continue;
      }
      if (plan.kind === 'response') return object(plan.response);
      if (!items.length) return { kind: 'texts', plan, texts: [], entry };
    }
    if (plan.kind !== 'plan') continue;
    // A value PostgreSQL cannot take as text fails here, before a client is borrowed.
    const unfit = textParamsError(items);
    if (unfit) return object(sqlErrorResponse(unfit));
    // The version guard is evaluated in the select that sets the role and claims.
    try {
      const results = await runPrepared(
        pool,
        guardedPrelude(principal, state),
        items.map((it) => it.compiled),
        transactionText,
        plan.operation === 'query' ? req.signal : undefined,
      );
      // The items' results come last, before commit's.
      const first = results.length - 1 - items.length;
      return {
        kind: 'texts',
        plan,
        texts: items.map((_, i) => jsonTextOf(results[first + i])),
        entry,
      };
    } catch (e) {
      const retry = more ? retryReason(e) : undefined;
      // Prepared statements do not survive between transactions here: retry with none.
      if (retry === 'prepared') stopPreparing(pool);
      if (retry === 'version') state = undefined;
      if (retry) continue;
      return object(sqlErrorResponse(e));
    }
  }
  return object({ data: null, errors: [{ message: 'schema changed during the request; retry' }] });
}

/** The response document (the statements' JSON parsed). */
export async function resolveOnPool(
  pool: pg.Pool,
  principal: Principal,
  req: Request,
): Promise<Record<string, unknown>> {
  const out = await runRequest(pool, principal, req);
  if (out.kind === 'object') return structuredClone(out.response);
  const values = out.texts.map(parseJsonText);
  return respond(out.plan, values, () => schemaOf(out.entry, true));
}

/** The response document as JSON text, the statements' JSON written as PostgreSQL returned it. */
export async function resolveOnPoolText(pool: pg.Pool, principal: Principal, req: Request): Promise<string> {
  return outcomeText(await runRequest(pool, principal, req));
}

/** An outcome as the response body's JSON text. */
export function outcomeText(out: Outcome): Promise<string> | string {
  if (out.kind === 'object') return JSON.stringify(out.response);
  return respondText(out.plan, out.texts, () => schemaOf(out.entry, true));
}

/** catalogOnPool's calls in flight, per pool and role: concurrent callers share one. */
const catalogLoads = new WeakMap<pg.Pool, Map<string, Promise<Catalog>>>();

/**
 * The catalog `principal` sees on `pool`, as resolveOnPool compiles against it (loaded, or
 * reloaded when the schema version moved on since it was cached).
 */
export function catalogOnPool(pool: pg.Pool, principal: Principal): Promise<Catalog> {
  let byRole = catalogLoads.get(pool);
  if (!byRole) {
    byRole = new Map();
    catalogLoads.set(pool, byRole);
  }
  const inFlight = byRole.get(principal.role);
  if (inFlight) return inFlight;
  const loads = byRole;
  const p = (async () => {
    let state = cachedState(pool, principal);
    if (state && !(await versionIs(pool, state.version))) state = undefined;
    state ??= await loadState(pool, principal);
    return state.entry.catalog;
  })().finally(() => loads.delete(principal.role));
  loads.set(principal.role, p);
  return p;
}
