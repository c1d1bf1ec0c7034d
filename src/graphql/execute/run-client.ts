/** resolve() on a caller's connection: current role and search_path; savepoint inside a transaction. */
import type pg from 'pg';
import { loadCatalog } from '../introspect/load.js';
import { cachedPlan, catalogKey, getEntry, planKey, putEntry, schemaOf, type CatalogEntry } from './cache.js';
import { planRequest, type Request } from './plan.js';
import { respond, sqlErrorResponse, sqlItems } from './respond.js';

const CONFIG_SQL = `select current_user::text as role, current_schemas(false)::text as search_path,
  (select oid::text from pg_database where datname = current_database()) || ':' || current_database() as db,
  graphql.get_schema_version() as version,
  (select max(version) from graphql.strata_schema_state) as tx_version`;

export async function entryFor(client: pg.ClientBase): Promise<CatalogEntry> {
  const { rows } = await client.query(CONFIG_SQL);
  const r = rows[0];
  const key = catalogKey(r.db, r.role, r.search_path, `${r.version}/${r.tx_version ?? ''}`);
  return getEntry(key) ?? putEntry(key, await loadCatalog(client));
}

function inTransaction(client: pg.ClientBase): boolean | undefined {
  const s = (client as unknown as { _txStatus?: string })._txStatus;
  return s === undefined ? undefined : s === 'T' || s === 'E';
}

/** Runs `work` so that an SQL error leaves the caller's transaction usable. */
async function guarded<T>(client: pg.ClientBase, work: () => Promise<T>): Promise<T> {
  let inTx = inTransaction(client);
  if (inTx === undefined) {
    try {
      await client.query('savepoint strata_graphql');
      inTx = true;
    } catch {
      inTx = false;
    }
  } else if (inTx) await client.query('savepoint strata_graphql');
  if (!inTx) await client.query('begin');
  try {
    const out = await work();
    await client.query(inTx ? 'release savepoint strata_graphql' : 'commit');
    return out;
  } catch (e) {
    await client.query(inTx ? 'rollback to savepoint strata_graphql; release savepoint strata_graphql' : 'rollback');
    throw e;
  }
}

export async function resolveOnClient(client: pg.ClientBase, req: Request): Promise<Record<string, unknown>> {
  let entry: CatalogEntry;
  try {
    entry = await guarded(client, () => entryFor(client));
  } catch (e) {
    return sqlErrorResponse(e);
  }
  const plan = cachedPlan(entry, planKey(req.query, req.operationName, req.variables), () => planRequest(entry.catalog, req));
  if (plan.kind === 'response') return structuredClone(plan.response);
  const items = sqlItems(plan);
  let results: unknown[] = [];
  if (items.length) {
    try {
      results = await guarded(client, async () => {
        const out: unknown[] = [];
        for (const it of items) {
          const res = await client.query({ text: it.compiled.sql, values: it.compiled.params, rowMode: 'array' });
          out.push(res.rows[0]?.[0] ?? null);
        }
        return out;
      });
    } catch (e) {
      return sqlErrorResponse(e);
    }
  }
  return respond(plan, results, () => schemaOf(entry, true));
}
