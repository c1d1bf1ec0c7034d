/**
 * pg_graphql's naming rules: the inflection of SQL names (used by the catalog loader) and every
 * GraphQL name derived from a table's type name — root fields and per-table types — which the
 * catalog loader, the schema builder and the compiler all take from here.
 */

export function isValidGraphQLName(name: string): boolean {
  return /^[_A-Za-z][_0-9A-Za-z]*$/.test(name);
}

/** snake_case → PascalCase: each character after an underscore is upper-cased, underscores dropped. */
export function toPascal(name: string): string {
  let out = '';
  let upper = true;
  for (const ch of name) {
    if (ch === '_') {
      upper = true;
      continue;
    }
    out += upper ? ch.toUpperCase() : ch;
    upper = false;
  }
  return out;
}

export function lowerFirst(name: string): string {
  return name.length ? name.charAt(0).toLowerCase() + name.slice(1) : name;
}

export function toCamel(name: string): string {
  return lowerFirst(toPascal(name));
}

export function typeNameFor(sqlName: string, inflect: boolean, override?: unknown): string {
  if (typeof override === 'string') return override;
  return inflect ? toPascal(sqlName) : sqlName;
}

export function fieldNameFor(sqlName: string, inflect: boolean, override?: unknown): string {
  if (typeof override === 'string') return override;
  return inflect ? toCamel(sqlName) : sqlName;
}

export function functionFieldName(sqlName: string, inflect: boolean, override?: unknown): string {
  if (typeof override === 'string') return override;
  // pg_graphql strips ONE leading underscore (`__x` → `_x`).
  const trimmed = sqlName.replace(/^_/, '');
  return lowerFirst(inflect ? toCamel(trimmed) : trimmed);
}

/** Name of the to-one field pointing from a table with `cols` to `targetTypeName`. */
export function toOneFieldName(cols: string[], inflect: boolean, targetTypeName: string): string {
  const c = cols.length === 1 ? cols[0] : undefined;
  if (c !== undefined) {
    if (inflect && c.endsWith('_id') && c.length > 3) return toCamel(c.slice(0, -3));
    if (!inflect && c.endsWith('Id') && c.length > 2) return c.slice(0, -2);
  }
  return lowerFirst(targetTypeName);
}

/** Root fields of a table with type name `t` (pg_graphql's `<Type>Collection` family). */
export const collectionField = (t: string): string => `${lowerFirst(t)}Collection`;
export const byPkField = (t: string): string => `${lowerFirst(t)}ByPk`;
export const insertField = (t: string): string => `insertInto${t}Collection`;
export const updateField = (t: string): string => `update${t}Collection`;
export const deleteField = (t: string): string => `deleteFrom${t}Collection`;
/** Strata `subscriptions`: a table's change stream (the collection field's name, `Collection` → `Changes`). */
export const changesField = (t: string): string => `${lowerFirst(t)}Changes`;

/** Per-table types of a table with type name `t` (filterType also names scalar and enum filters). */
export const connectionType = (t: string): string => `${t}Connection`;
export const edgeType = (t: string): string => `${t}Edge`;
export const filterType = (t: string): string => `${t}Filter`;
/** The filter of an array column whose elements are scalar `s`. */
export const listFilterType = (s: string): string => `${s}ListFilter`;
export const orderByType = (t: string): string => `${t}OrderBy`;
/** Strata extensions (opt-in per schema, see model.ts StrataFeatures). */
export const toManyFilterType = (t: string): string => `${t}ToManyFilter`;
export const constraintType = (t: string): string => `${t}Constraint`;
export const updateColumnType = (t: string): string => `${t}UpdateColumn`;
export const onConflictType = (t: string): string => `${t}OnConflict`;
export const insertInputType = (t: string): string => `${t}InsertInput`;
export const updateInputType = (t: string): string => `${t}UpdateInput`;
export type MutationKind = 'Insert' | 'Update' | 'Delete';
export const mutationResponseType = (t: string, kind: MutationKind): string => `${t}${kind}Response`;
/** Strata `subscriptions`: a change stream's event type, and the enum of its `op`. */
export const changeType = (t: string): string => `${t}Change`;
export const CHANGE_OP_TYPE = 'ChangeOp';
export const aggregateType = (t: string): string => `${t}Aggregate`;
export type AggregateKind = 'Sum' | 'Avg' | 'Min' | 'Max';
export const aggregateResultType = (t: string, kind: AggregateKind): string => `${t}${kind}AggregateResult`;
