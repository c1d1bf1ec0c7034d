/**
 * resolve() on a caller's connection, as its current role and search_path.
 * Round trips for a cached request: the version/config query, then one message with the
 * statements (inside a transaction wrapped in a savepoint; outside, in their own transaction).
 */
import type pg from 'pg';
import { CATALOG_SQL } from '../introspect/catalog-sql.js';
import { buildCatalog } from '../introspect/load.js';
import { inlineParams } from '../transpile/sql-text.js';
import { catalogKey, getEntry, planFor, putEntry, schemaOf, type CatalogEntry } from './cache.js';
import type { Request } from './plan.js';
import { variablesError } from './request-input.js';
import { respond, sqlErrorResponse, sqlItems } from './respond.js';
import { firstRow } from '../../db/first-row.js';
import { inTransaction } from '../../db/transaction-status.js';

const CONFIG_SQL = `select current_user::text as role, current_schemas(false)::text as search_path,
  (select oid::text from pg_database where datname = current_database()) || ':' || current_database() as db,
  graphql.get_schema_version() as version,
  (select max(version) from graphql.strata_schema_state) as tx_version`;

const SP = 'strata_graphql';

/** A compiled statement's answer: the single column of its first row (null when it returned no row). */
function firstValue(res: pg.QueryResult | undefined): unknown {
  if (res === undefined) throw new Error('internal error: a statement of the message has no result');
  const row = res.rows[0];
  if (!row) return null;
  const field = res.fields[0];
  if (field === undefined) throw new Error('internal error: a statement returned a row without a column');
  return row[field.name] ?? null;
}

/**
 * Runs `statements` as one simple-protocol message and returns each statement's result.
 * In a transaction they run under a savepoint (an error leaves the caller's transaction usable);
 * outside one, several statements run in their own transaction.
 */
async function runMessage(client: pg.ClientBase, statements: string[]): Promise<pg.QueryResult[]> {
  const inTx = inTransaction(client);
  const wrap = inTx
    ? [`savepoint ${SP}`, `release savepoint ${SP}`]
    : statements.length > 1
      ? ['begin', 'commit']
      : undefined;
  const text = wrap ? [wrap[0], ...statements, wrap[1]].join('; ') : statements[0];
  if (text === undefined) throw new Error('internal error: runMessage without a statement');
  try {
    const res = (await client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
    const all = Array.isArray(res) ? res : [res];
    return wrap ? all.slice(1, 1 + statements.length) : all;
  } catch (e) {
    if (wrap) await client.query(inTx ? `rollback to savepoint ${SP}; release savepoint ${SP}` : 'rollback');
    throw e;
  }
}

export async function entryFor(client: pg.ClientBase): Promise<CatalogEntry> {
  const [cfg] = await runMessage(client, [CONFIG_SQL]);
  const r = firstRow(cfg, 'the GraphQL config query');
  const key = catalogKey(r.db, r.role, r.search_path, `${r.version}/${r.tx_version ?? ''}`);
  const hit = getEntry(key);
  if (hit) return hit;
  const [cat] = await runMessage(client, [CATALOG_SQL]);
  return putEntry(key, buildCatalog(firstRow(cat, 'the GraphQL catalog query').catalog));
}

export async function resolveOnClient(client: pg.ClientBase, req: Request): Promise<Record<string, unknown>> {
  const refused = variablesError(req.variables);
  if (refused) return refused;
  let entry: CatalogEntry;
  try {
    entry = await entryFor(client);
  } catch (e) {
    return sqlErrorResponse(e);
  }
  const plan = planFor(entry, req);
  if (plan.kind === 'response') return structuredClone(plan.response);
  const items = sqlItems(plan);
  let results: unknown[] = [];
  if (items.length) {
    try {
      const res = await runMessage(
        client,
        items.map((it) => inlineParams(it.compiled.sql, it.compiled.params)),
      );
      results = res.map(firstValue);
    } catch (e) {
      return sqlErrorResponse(e);
    }
  }
  return respond(plan, results, () => schemaOf(entry, true));
}
