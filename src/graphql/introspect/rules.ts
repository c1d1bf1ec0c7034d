/** Decisions derived from the catalog model that both the schema builder and the compiler use. */
import { filterType, isValidGraphQLName, listFilterType } from './naming.js';
import type { Column, Func, Relationship, ScalarName, SqlType, Table } from './model.js';

/** Scalars that have a `<Scalar>Filter` input type (sorted by name). */
export const FILTER_SCALARS: readonly ScalarName[] = [
  'BigFloat',
  'BigInt',
  'Boolean',
  'Date',
  'Datetime',
  'Float',
  'ID',
  'Int',
  'Opaque',
  'String',
  'Time',
  'UUID',
];

/** Scalars whose arrays have a `<Scalar>ListFilter` input type (sorted by name). */
export const LIST_FILTER_SCALARS: readonly ScalarName[] = FILTER_SCALARS.filter(
  (s) => s !== 'ID' && s !== 'Opaque',
);

/** The operators of every `<Scalar>ListFilter` (sorted by name). */
export const LIST_FILTER_OPS: readonly string[] = ['containedBy', 'contains', 'eq', 'is', 'overlaps'];

/** The operators a scalar filter type has (sorted by name as pg_graphql lists them). */
export function filterOps(scalar: string): string[] {
  if (scalar === 'ID') return ['eq'];
  if (scalar === 'Boolean' || scalar === 'Opaque') return ['eq', 'is'];
  if (scalar === 'UUID') return ['eq', 'in', 'is', 'neq'];
  const ops = ['eq', 'gt', 'gte', 'in', 'is', 'lt', 'lte', 'neq'];
  if (scalar === 'String') ops.push('ilike', 'iregex', 'like', 'regex', 'startsWith');
  return ops.sort();
}

/** The operators of an enum's filter type. */
export function enumFilterOps(): string[] {
  return ['eq', 'in', 'is', 'neq'];
}

/** The cast of a value of type `t`, or of one element when `t` is an array type. */
export function elementCast(t: SqlType): string {
  return t.isArray ? t.castName.replace(/\[\]$/, '') : t.castName;
}

/** Columns that appear as fields (composite-typed columns are omitted). */
export function selectableColumns(t: Table): Column[] {
  return t.columns.filter((c) => c.canSelect && c.type.compositeRelid === undefined && !c.type.pseudo);
}

/** The filter input type name for a column, or undefined when it is not filterable. */
export function filterTypeOf(type: SqlType): string | undefined {
  if (type.compositeRelid !== undefined) return undefined;
  if (type.isArray) {
    if (type.enumRef) return undefined;
    return LIST_FILTER_SCALARS.includes(type.scalar) ? listFilterType(type.scalar) : undefined;
  }
  if (type.enumRef) return filterType(type.enumRef.name);
  if (type.scalar === 'JSON') return undefined;
  return filterType(type.scalar);
}

export function isOrderable(c: Column): boolean {
  return (
    (!c.type.isArray || c.type.untypedDomain === true) &&
    c.type.scalar !== 'JSON' &&
    c.type.compositeRelid === undefined
  );
}

/**
 * The columns of `<Type>OrderBy`. pg_graphql (graphql.rs OrderByEntityType) goes by the column's
 * `format_type` text, not its GraphQL type: a domain over an array (no GraphQL type, so no field)
 * is still a sort key, while an array of anything is not.
 */
export function orderableColumns(t: Table): Column[] {
  return t.columns.filter(
    (c) =>
      c.canSelect &&
      c.type.compositeRelid === undefined &&
      (!c.type.pseudo || c.type.untypedDomain === true) &&
      isOrderable(c),
  );
}

export function insertableColumns(t: Table): Column[] {
  return t.columns.filter(
    (c) =>
      c.canInsert && !c.generated && !c.isSerial && c.type.compositeRelid === undefined && !c.type.pseudo,
  );
}

/**
 * The fields of `<Type>UpdateInput`: as `<Type>InsertInput`'s, without generated and serial
 * columns (pg_graphql graphql.rs UpdateInputType::input_fields filters `is_serial` too).
 */
export function updatableColumns(t: Table): Column[] {
  return t.columns.filter(
    (c) =>
      c.canUpdate && !c.generated && !c.isSerial && c.type.compositeRelid === undefined && !c.type.pseudo,
  );
}

/**
 * Whether the table has an insert (update) mutation: the role may insert (update) some column,
 * whatever the input type then holds (pg_graphql's is_any_column_insertable/_updatable), so a
 * table whose only insertable column is serial still has one, with an input type of no fields.
 */
export function hasInsertMutation(t: Table): boolean {
  return anyColumn(t, (c) => c.canInsert) !== undefined;
}

export function hasUpdateMutation(t: Table): boolean {
  return anyColumn(t, (c) => c.canUpdate) !== undefined;
}

/**
 * The first column of `t`, with a GraphQL name or without one (pg_graphql's privilege and key
 * checks look at every column), for which `test` holds.
 */
export function anyColumn(t: Table, test: (c: Column) => boolean): Column | undefined {
  return t.columns.find(test) ?? t.unnamedColumns.find(test);
}

/** The column of `t` whose SQL name is `sqlName`, with a GraphQL name or without one. */
export function columnBySqlName(t: Table, sqlName: string): Column | undefined {
  return anyColumn(t, (c) => c.sqlName === sqlName);
}

const PK_TYPES = new Set(['int2', 'int4', 'int8', 'text', 'varchar', 'bpchar', 'citext', 'uuid']);

export function hasByPk(t: Table): boolean {
  return (
    t.primaryKey.length > 0 &&
    t.primaryKey.every((n) => {
      const c = t.columns.find((x) => x.sqlName === n);
      return !!c && c.canSelect && !c.type.isArray && PK_TYPES.has(c.type.baseName);
    })
  );
}

/** The primary key's columns, with or without GraphQL names (buildCatalog keeps only keys of existing columns). */
export function pkColumns(t: Table): Column[] {
  return t.primaryKey.map((n) => {
    const c = columnBySqlName(t, n);
    if (!c) throw new Error(`internal error: primary key column "${n}" is not a column of ${t.sqlName}`);
    return c;
  });
}

const NUMERIC = new Set(['int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'money']);
const MINMAX = new Set([
  'int2',
  'int4',
  'int8',
  'float4',
  'float8',
  'numeric',
  'money',
  'text',
  'varchar',
  'bpchar',
  'citext',
  'date',
  'time',
  'timetz',
  'timestamp',
  'timestamptz',
  'bool',
  'uuid',
]);

export function sumAvgColumns(t: Table): Column[] {
  return selectableColumns(t).filter(
    (c) => !c.type.isArray && !c.type.opaqueDomain && NUMERIC.has(c.type.baseName),
  );
}

export function minMaxColumns(t: Table): Column[] {
  return selectableColumns(t).filter(
    (c) =>
      !c.type.isArray &&
      !c.type.opaqueDomain &&
      MINMAX.has(c.type.baseName) &&
      c.type.baseName !== 'bool' &&
      c.type.baseName !== 'uuid',
  );
}

/**
 * Strata `setof_scalars`: the paging arguments of a list field (a function returning `setof` a
 * scalar or array), a connection's `first` and `offset`: at most `first` values (never more than
 * `max_rows`, as a connection's page) after skipping `offset`, in the function's order.
 */
export const LIST_PAGE_ARGS: readonly string[] = ['first', 'offset'];

/** Functions on Query (stable/immutable) and Mutation (volatile). */
export function isQueryFunction(f: Func): boolean {
  return f.volatility !== 'v';
}

/** What a field of a table's node type reads. */
export type NodeFieldOwner =
  | { kind: 'nodeId' }
  | { kind: 'column'; column: Column }
  | { kind: 'relationship'; relationship: Table['relationships'][number] }
  | { kind: 'function'; fn: Func };

const nodeFieldCache = new WeakMap<Table, Map<string, NodeFieldOwner>>();

/**
 * The fields of a table's node type by name. pg_graphql lists `nodeId`, the columns, the
 * relationships, then the computed fields, and resolves a name to the LAST of them that has it:
 * a computed field (e.g. `_name(t)` → `name`) wins over a relationship, which wins over a column,
 * which wins over `nodeId`. A name keeps the place of its first occurrence.
 */
export function nodeFields(t: Table): Map<string, NodeFieldOwner> {
  let m = nodeFieldCache.get(t);
  if (m) return m;
  m = new Map();
  if (t.primaryKey.length) m.set('nodeId', { kind: 'nodeId' });
  for (const column of selectableColumns(t)) m.set(column.fieldName, { kind: 'column', column });
  for (const relationship of t.relationships)
    m.set(relationship.fieldName, { kind: 'relationship', relationship });
  for (const fn of t.computed) m.set(fn.fieldName, { kind: 'function', fn });
  nodeFieldCache.set(t, m);
  return m;
}

/**
 * Strata `related_filters`: the relationships that are fields of `<Type>Filter` (both kinds) or
 * of `<Type>OrderBy` (to-one only), by field name. A name the input type already has (a column,
 * `and`, `or`, `not`, `nodeId`) stays pg_graphql's field.
 */
export function relatedInputFields(t: Table, input: 'filter' | 'orderBy'): Map<string, Relationship> {
  const m = new Map<string, Relationship>();
  if (!t.schemaInfo.strata.relatedFilters) return m;
  const taken = new Set(selectableColumns(t).map((c) => c.fieldName));
  if (input === 'filter') for (const k of ['and', 'or', 'not', 'nodeId']) taken.add(k);
  for (const r of t.relationships) {
    if (taken.has(r.fieldName) || m.has(r.fieldName)) continue;
    if (input === 'orderBy' && r.kind !== 'toOne') continue;
    m.set(r.fieldName, r);
  }
  return m;
}

/** The quantifiers of a to-many relationship filter (`<Type>ToManyFilter`). */
export const TO_MANY_QUANTIFIERS = ['every', 'none', 'some'] as const;
export type ToManyQuantifier = (typeof TO_MANY_QUANTIFIERS)[number];

/**
 * Strata `upsert`: what `onConflict` of `insertInto<Type>Collection` offers — the conflict
 * targets (`<Type>Constraint`: unique constraints and indexes by name, when the name is a GraphQL
 * name and every column a column of the table) and the columns the role may update
 * (`<Type>UpdateColumn`). Undefined when the schema has not opted in or either list is empty
 * (a GraphQL enum has at least one value).
 */
export function upsertOptions(
  t: Table,
): { targets: { name: string; columns: Column[] }[]; updatable: Column[] } | undefined {
  if (!t.schemaInfo.strata.upsert || !insertableColumns(t).length) return undefined;
  const targets: { name: string; columns: Column[] }[] = [];
  for (const u of t.conflictTargets) {
    if (!isValidGraphQLName(u.name)) continue;
    const columns = u.columns.map((n) => t.columns.find((c) => c.sqlName === n));
    if (columns.every((c) => c !== undefined)) targets.push({ name: u.name, columns: columns as Column[] });
  }
  const updatable = updatableColumns(t);
  return targets.length && updatable.length ? { targets, updatable } : undefined;
}

/** How many relationships a nested insert may go through, one inside another (Strata `nested_mutations`). */
export const NESTED_INSERT_DEPTH_LIMIT = 8;

/**
 * How many INSERTs (data-modifying CTEs) one nested insert may compile to: PostgreSQL's planning
 * time grows faster than linearly with them (about 0.25 s for 1,000 here, 0.8 s for 3,000).
 */
export const NESTED_INSERT_STATEMENT_LIMIT = 1000;

/**
 * Strata `nested_mutations`: the relationships that are fields of `<Type>InsertInput`, by field
 * name — those whose rows the role can create with the key copied: the target has an insert
 * input (a primary key and an insertable column) and the role may insert the foreign key's
 * columns (on this table for a to-one relationship holding the key, on the target otherwise).
 * A name a column of the table already has stays the column's.
 */
export function nestedInsertFields(t: Table): Map<string, Relationship> {
  const m = new Map<string, Relationship>();
  if (!t.schemaInfo.strata.nestedMutations) return m;
  const taken = new Set(t.columns.map((c) => c.fieldName));
  const insertable = (table: Table, names: string[]) => {
    const cols = new Set(insertableColumns(table).map((c) => c.sqlName));
    return names.every((n) => cols.has(n));
  };
  for (const r of t.relationships) {
    if (taken.has(r.fieldName) || m.has(r.fieldName)) continue;
    if (!r.target.primaryKey.length || !insertableColumns(r.target).length) continue;
    if (!(r.referencing ? insertable(t, r.localColumns) : insertable(r.target, r.targetColumns))) continue;
    m.set(r.fieldName, r);
  }
  return m;
}
