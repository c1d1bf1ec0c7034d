/** The Query and Mutation root fields of a catalog, by GraphQL name (same rules as the schema builder). */
import { lowerFirst } from '../introspect/naming.js';
import type { Catalog, Func, Table } from '../introspect/model.js';
import { hasByPk, insertableColumns, isQueryFunction, updatableColumns } from '../introspect/rules.js';

export type RootField =
  | { kind: 'collection'; table: Table }
  | { kind: 'byPk'; table: Table }
  | { kind: 'node' }
  | { kind: 'function'; func: Func }
  | { kind: 'insert'; table: Table }
  | { kind: 'update'; table: Table }
  | { kind: 'delete'; table: Table };

export interface RootFields {
  query: Map<string, RootField>;
  mutation: Map<string, RootField>;
}

const cache = new WeakMap<Catalog, RootFields>();

export function rootFields(catalog: Catalog): RootFields {
  const hit = cache.get(catalog);
  if (hit) return hit;
  const query = new Map<string, RootField>([['node', { kind: 'node' }]]);
  const mutation = new Map<string, RootField>();
  for (const t of catalog.tables) {
    if (!t.primaryKey.length) continue;
    const base = lowerFirst(t.typeName);
    query.set(`${base}Collection`, { kind: 'collection', table: t });
    if (hasByPk(t)) query.set(`${base}ByPk`, { kind: 'byPk', table: t });
    if (insertableColumns(t).length)
      mutation.set(`insertInto${t.typeName}Collection`, { kind: 'insert', table: t });
    if (updatableColumns(t).length)
      mutation.set(`update${t.typeName}Collection`, { kind: 'update', table: t });
    if (t.canDelete) mutation.set(`deleteFrom${t.typeName}Collection`, { kind: 'delete', table: t });
  }
  for (const f of catalog.functions) {
    const target = isQueryFunction(f) ? query : mutation;
    if (!target.has(f.fieldName)) target.set(f.fieldName, { kind: 'function', func: f });
  }
  const out = { query, mutation };
  cache.set(catalog, out);
  return out;
}
