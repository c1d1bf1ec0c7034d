/** Caches: catalog + schemas per (database, role, search_path, schema version); plans per request within it. */
import type { GraphQLSchema } from 'graphql';
import type { Catalog } from '../introspect/model.js';
import { buildSchemaFromCatalog } from '../schema/build.js';
import { planRequest, type Plan, type Request } from './plan.js';
import { fillTemplate, shapeKey, templateOf, templateReads, type Template } from './plan-template.js';

export interface CatalogEntry {
  key: string;
  catalog: Catalog;
  plans: Map<string, Plan>;
  /** Per (document, operation, variable shape): a template, or null when values shape the SQL. */
  templates: Map<string, Template | null>;
  schema?: GraphQLSchema;
  introspectionSchema?: GraphQLSchema;
}

/** Deletes the first-inserted key of `map` (plain Maps iterate in insertion order); nothing when it is empty. */
function deleteOldest<K>(map: Map<K, unknown>): void {
  const oldest = map.keys().next();
  if (!oldest.done) map.delete(oldest.value);
}

const MAX_ENTRIES = 64;
const MAX_PLANS = 1000;
/** Plans of longer documents are not kept (the caches' memory stays bounded whatever is sent). */
const CACHEABLE_QUERY_LENGTH = 64 * 1024;
const entries = new Map<string, CatalogEntry>();

export function catalogKey(db: string, role: string, searchPath: string, version: number | string): string {
  return `${db}\u0000${role}\u0000${searchPath}\u0000${version}`;
}

export function getEntry(key: string): CatalogEntry | undefined {
  const e = entries.get(key);
  if (e) {
    entries.delete(key);
    entries.set(key, e);
  }
  return e;
}

export function putEntry(key: string, catalog: Catalog): CatalogEntry {
  const e: CatalogEntry = { key, catalog, plans: new Map(), templates: new Map() };
  entries.set(key, e);
  while (entries.size > MAX_ENTRIES) deleteOldest(entries);
  return e;
}

export function planKey(query: string, operationName: string | null | undefined, variables: unknown): string {
  return `${operationName ?? ''}\u0000${query}\u0000${variables === undefined || variables === null ? '' : JSON.stringify(variables)}`;
}

export function cachedPlan(entry: CatalogEntry, key: string, make: () => Plan): Plan {
  let p = entry.plans.get(key);
  if (!p) {
    p = make();
    if (key.length > CACHEABLE_QUERY_LENGTH) return p;
    if (entry.plans.size >= MAX_PLANS) deleteOldest(entry.plans);
    entry.plans.set(key, p);
  }
  return p;
}

/**
 * The plan of a request: a template filled with this request's string and integer variables when
 * the document allows it (no building), else the plan built for exactly these variables (cached too).
 */
export function planFor(entry: CatalogEntry, req: Request): Plan {
  const shape = req.query.length <= CACHEABLE_QUERY_LENGTH ? shapeKey(req.variables) : undefined;
  if (shape !== undefined) {
    const tkey = `${req.operationName ?? ''}\u0000${req.query}\u0000${shape}`;
    const t = entry.templates.get(tkey);
    if (t) return fillTemplate(t, req);
    if (t === undefined) {
      // First request of this shape: plan it for reuse (it is this request's plan as well).
      const reads = templateReads(req);
      const plan = planRequest(entry.catalog, req, reads);
      const made = templateOf(plan, reads);
      if (entry.templates.size >= MAX_PLANS) deleteOldest(entry.templates);
      entry.templates.set(tkey, made ?? null);
      if (made) return plan;
    }
  }
  return cachedPlan(entry, planKey(req.query, req.operationName, req.variables), () =>
    planRequest(entry.catalog, req),
  );
}

export function schemaOf(entry: CatalogEntry, introspectionView: boolean): GraphQLSchema {
  if (introspectionView) {
    entry.introspectionSchema ??= buildSchemaFromCatalog(entry.catalog, { introspectionView: true });
    return entry.introspectionSchema;
  }
  entry.schema ??= buildSchemaFromCatalog(entry.catalog);
  return entry.schema;
}
