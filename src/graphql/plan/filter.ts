/** `filter` arguments → a FilterPlan, every value a parameter cast to its column's type. */
import type { Column, Table } from '../introspect/model.js';
import { filterType, toManyFilterType } from '../introspect/naming.js';
import {
  elementCast,
  enumFilterOps,
  filterOps,
  filterTypeOf,
  LIST_FILTER_OPS,
  pkColumns,
  relatedInputFields,
  selectableColumns,
  TO_MANY_QUANTIFIERS,
  type ToManyQuantifier,
} from '../introspect/rules.js';
import { debugList, fail } from './errors.js';
import { decodeNodeId } from './node-id.js';
import type { FilterPlan, PkMatch } from './plan-types.js';
import { arrayParamOf, EnumLiteral, isPlainObject, paramOf } from './values.js';

/** Operators whose value is text (the column too, for `startsWith`). */
const TEXT_OPS = ['startsWith', 'like', 'ilike', 'regex', 'iregex'];

/** How many relationships a filter may go through, one inside another (Strata `related_filters`). */
export const RELATED_DEPTH_LIMIT = 8;

export function buildFilter(table: Table, value: unknown, depth = 0): FilterPlan {
  if (value === null || value === undefined) return { kind: 'true' };
  const typeName = filterType(table.typeName);
  if (!isPlainObject(value)) fail(`Invalid input for ${typeName} type`);
  const obj = value as Record<string, unknown>;
  // Filterable columns by field name, each with its filter input type.
  const cols = new Map<string, [Column, string]>();
  for (const c of selectableColumns(table)) {
    const ft = filterTypeOf(c.type);
    if (ft) cols.set(c.fieldName, [c, ft]);
  }
  const related = relatedInputFields(table, 'filter');
  const extra = Object.keys(obj).filter(
    (k) => !cols.has(k) && !related.has(k) && !['and', 'or', 'not', 'nodeId'].includes(k),
  );
  if (extra.length) fail(`Input for type ${typeName} contains extra keys ${debugList(extra)}`);
  const parts: FilterPlan[] = [];
  // In the filter type's field order, as pg_graphql validates an input object: with several bad
  // fields, the first of them in the type is the one reported.
  for (const key of new Set([...cols.keys(), 'nodeId', 'and', 'or', 'not', ...related.keys()])) {
    if (!Object.hasOwn(obj, key)) continue;
    const v = obj[key];
    const filterable = cols.get(key);
    const rel = related.get(key);
    if (filterable) {
      parts.push(...columnFilter(filterable[0], filterable[1], v));
    } else if (rel) {
      if (v === null) continue;
      if (depth >= RELATED_DEPTH_LIMIT)
        fail(`Filter nests relationships deeper than the limit of ${RELATED_DEPTH_LIMIT}`);
      if (rel.kind === 'toOne') {
        parts.push({
          kind: 'related',
          rel,
          quantifier: 'some',
          inner: buildFilter(rel.target, v, depth + 1),
        });
        continue;
      }
      const typeName = toManyFilterType(rel.target.typeName);
      if (!isPlainObject(v)) fail(`Invalid input for ${typeName} type`);
      const q = Object.keys(v).filter((k) => !(TO_MANY_QUANTIFIERS as readonly string[]).includes(k));
      if (q.length) fail(`Input for type ${typeName} contains extra keys ${debugList(q)}`);
      for (const [quantifier, inner] of Object.entries(v)) {
        if (inner === null) continue;
        const plan = buildFilter(rel.target, inner, depth + 1);
        parts.push({ kind: 'related', rel, quantifier: quantifier as ToManyQuantifier, inner: plan });
      }
    } else if (key === 'nodeId') {
      if (v === null) continue;
      if (!isPlainObject(v)) fail('Invalid input for IDFilter type');
      const o = v as Record<string, unknown>;
      const bad = Object.keys(o).filter((k) => k !== 'eq');
      if (bad.length) fail(`Input for type IDFilter contains extra keys ${debugList(bad)}`);
      if (o.eq === undefined) continue;
      if (typeof o.eq !== 'string') fail('Invalid input for ID type');
      const id = decodeNodeId(o.eq as string);
      if (id.schema !== table.schema || id.table !== table.sqlName)
        fail('nodeId belongs to a different collection');
      parts.push({ kind: 'pk', match: pkMatch(table, id.values) });
    } else if (key === 'and' || key === 'or') {
      if (v === null) continue;
      const list = nonNullItems(Array.isArray(v) ? v : [v]);
      // pg_graphql (builder.rs create_filters) drops an entry that constrains nothing (`{}`, or
      // operators whose variables were omitted): `or: [{}, {id: {eq: 2}}]` is `id = 2`, not true.
      const inner = list.map((x) => buildFilter(table, x, depth)).filter((f) => f.kind !== 'true');
      if (!inner.length) continue;
      parts.push({ kind: 'group', op: key, parts: inner });
    } else if (key === 'not') {
      if (v === null) continue;
      const inner = buildFilter(table, v, depth);
      // Nor is a `not` kept around nothing (`not: {}`, `not: {or: [{}]}`).
      if (inner.kind === 'true') continue;
      parts.push({ kind: 'not', inner });
    }
  }
  return parts.length ? { kind: 'all', parts } : { kind: 'true' };
}

/** The primary key of `table` equal to a node id's values (JSON values as text). */
export function pkMatch(table: Table, values: unknown[]): PkMatch {
  const columns = pkColumns(table);
  if (values.length !== columns.length) fail('Invalid value passed to nodeId argument. Error 9');
  return {
    columns,
    values: columns.map((c, i) => {
      const v = values[i];
      const text = v === null ? null : typeof v === 'object' ? JSON.stringify(v) : String(v);
      return { text, cast: elementCast(c.type) };
    }),
  };
}

/** `ft`: the column's filter input type (filterTypeOf). */
function columnFilter(c: Column, ft: string, v: unknown): FilterPlan[] {
  if (v === null) return [];
  if (!isPlainObject(v)) fail(`Invalid input for ${ft} type`);
  const ops = c.type.isArray ? LIST_FILTER_OPS : c.type.enumRef ? enumFilterOps() : filterOps(c.type.scalar);
  const o = v as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !ops.includes(k));
  if (extra.length) fail(`Input for type ${ft} contains extra keys ${debugList(extra)}`);
  const el = { ...c.type, isArray: false };
  const cast = elementCast(c.type);
  const out: FilterPlan[] = [];
  // In the filter type's field order (see buildFilter).
  for (const op of ops) {
    if (!Object.hasOwn(o, op)) continue;
    const x = o[op];
    if (op === 'is') {
      if (x === null) fail('Error transpiling Is filter value type');
      const name = x instanceof EnumLiteral ? x.name : typeof x === 'string' ? x : undefined;
      if (name === 'NULL') out.push({ kind: 'null', column: c, negated: false });
      else if (name === 'NOT_NULL') out.push({ kind: 'null', column: c, negated: true });
      else fail('Invalid input for FilterIs type');
    } else if (c.type.isArray) {
      const value =
        x === null ? null : arrayParamOf(el, nonNullItems(Array.isArray(x) ? x : [x]), `${cast}[]`);
      out.push({ kind: 'list', column: c, op, value });
    } else if (op === 'in') {
      if (x === null) out.push({ kind: 'false' });
      else
        out.push({
          kind: 'in',
          column: c,
          value: arrayParamOf(el, nonNullItems(Array.isArray(x) ? x : [x]), `${cast}[]`),
        });
    } else {
      if (Array.isArray(x) || isPlainObject(x))
        fail(`Invalid input for ${el.enumRef ? el.enumRef.name : el.scalar} type`);
      const value = paramOf(el, x, TEXT_OPS.includes(op) ? 'text' : cast);
      out.push({ kind: 'compare', column: c, op, value, columnAsText: op === 'startsWith' });
    }
  }
  return out;
}

/** The items of a `[T!]` input list (`in`, list operators, `and`/`or`): a missing one is refused. */
function nonNullItems(list: unknown[]): unknown[] {
  if (list.some((x) => x === null || x === undefined)) fail('Invalid input for NonNull type');
  return list;
}
