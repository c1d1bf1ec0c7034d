/**
 * The Query and Mutation root fields of a catalog, by GraphQL name: the one list the schema
 * builder turns into field definitions and the compiler resolves a request's fields against.
 */
import type { ChangeTable } from './change-streams.js';
import type { Catalog, Func, Table } from './model.js';
import { byPkField, collectionField, deleteField, insertField, updateField } from './naming.js';
import { hasByPk, hasInsertMutation, hasUpdateMutation, isQueryFunction } from './rules.js';

export type RootField =
  | { kind: 'collection'; table: Table }
  | { kind: 'byPk'; table: Table }
  | { kind: 'node' }
  | { kind: 'function'; func: Func }
  | { kind: 'insert'; table: Table }
  | { kind: 'update'; table: Table }
  | { kind: 'delete'; table: Table }
  /** Strata `subscriptions`: a table's change stream (Subscription only; introspect/change-streams.ts). */
  | { kind: 'changes'; table: Table; changes: ChangeTable };

export interface RootFields {
  query: Map<string, RootField>;
  mutation: Map<string, RootField>;
  /**
   * Strata `subscriptions`: the live-query fields, each the Query field of the same name (its
   * collection and `ByPk` fields of the schemas that turned the feature on), and their tables'
   * change streams (`<type>Changes`); empty otherwise.
   */
  subscription: Map<string, RootField>;
}

/** Which tables and functions a schema shows (the introspection view hides some). */
export interface RootFilter {
  table(t: Table): boolean;
  func(f: Func): boolean;
}

const cache = new WeakMap<Catalog, RootFields>();

/**
 * The root fields of the tables and functions `visible` keeps (all of them by default). A
 * function whose name a table's field (or an earlier function) already took is left out.
 */
export function rootFields(catalog: Catalog, visible?: RootFilter): RootFields {
  const hit = visible ? undefined : cache.get(catalog);
  if (hit) return hit;
  const query = new Map<string, RootField>([['node', { kind: 'node' }]]);
  const mutation = new Map<string, RootField>();
  const subscription = new Map<string, RootField>();
  for (const t of catalog.tables) {
    if (!t.primaryKey.length || (visible && !visible.table(t))) continue;
    query.set(collectionField(t.typeName), { kind: 'collection', table: t });
    if (hasByPk(t)) query.set(byPkField(t.typeName), { kind: 'byPk', table: t });
    if (hasInsertMutation(t)) mutation.set(insertField(t.typeName), { kind: 'insert', table: t });
    if (hasUpdateMutation(t)) mutation.set(updateField(t.typeName), { kind: 'update', table: t });
    if (t.canDelete) mutation.set(deleteField(t.typeName), { kind: 'delete', table: t });
  }
  if (catalog.tables.some((t) => t.schemaInfo.strata.subscriptions))
    for (const [name, rf] of query)
      if ((rf.kind === 'collection' || rf.kind === 'byPk') && rf.table.schemaInfo.strata.subscriptions)
        subscription.set(name, rf);
  for (const [t, changes] of catalog.changeStreams ?? [])
    if (!visible || visible.table(t)) subscription.set(changes.field, { kind: 'changes', table: t, changes });
  for (const f of catalog.functions) {
    if (visible && !visible.func(f)) continue;
    const target = isQueryFunction(f) ? query : mutation;
    if (!target.has(f.fieldName)) target.set(f.fieldName, { kind: 'function', func: f });
  }
  const out = { query, mutation, subscription };
  if (!visible) cache.set(catalog, out);
  return out;
}
