/** Caches: catalog + schemas per (database, role, search_path, schema version); plans per request within it. */
import type { GraphQLSchema } from 'graphql';
import type { Catalog } from '../introspect/model.js';
import { buildSchemaFromCatalog } from '../schema/build.js';
import type { Plan } from './plan.js';

export interface CatalogEntry {
  key: string;
  catalog: Catalog;
  plans: Map<string, Plan>;
  schema?: GraphQLSchema;
  introspectionSchema?: GraphQLSchema;
}

const MAX_ENTRIES = 64;
const MAX_PLANS = 1000;
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
  const e: CatalogEntry = { key, catalog, plans: new Map() };
  entries.set(key, e);
  while (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  return e;
}

export function planKey(query: string, operationName: string | null | undefined, variables: unknown): string {
  return `${operationName ?? ''}\u0000${query}\u0000${variables === undefined || variables === null ? '' : JSON.stringify(variables)}`;
}

export function cachedPlan(entry: CatalogEntry, key: string, make: () => Plan): Plan {
  let p = entry.plans.get(key);
  if (!p) {
    p = make();
    if (entry.plans.size >= MAX_PLANS) entry.plans.delete(entry.plans.keys().next().value!);
    entry.plans.set(key, p);
  }
  return p;
}

function sortTypeMap(schema: GraphQLSchema): GraphQLSchema {
  const s = schema as unknown as { _typeMap: Record<string, unknown> };
  s._typeMap = Object.fromEntries(Object.entries(s._typeMap).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return schema;
}

export function schemaOf(entry: CatalogEntry, introspectionView: boolean): GraphQLSchema {
  if (introspectionView) return (entry.introspectionSchema ??= sortTypeMap(buildSchemaFromCatalog(entry.catalog, { introspectionView: true })));
  return (entry.schema ??= sortTypeMap(buildSchemaFromCatalog(entry.catalog)));
}
