/** `filter` arguments → a SQL boolean over a row, every value a parameter cast to the column's type. */
import { filterType } from '../introspect/naming.js';
import type { Column, Table } from '../introspect/model.js';
import {
  enumFilterOps,
  filterOps,
  filterTypeOf,
  LIST_FILTER_OPS,
  pkColumns,
  selectableColumns,
} from '../introspect/rules.js';
import type { Comp } from './context.js';
import { fail } from './errors.js';
import { col } from './json-value.js';
import { decodeNodeId } from './node-id.js';
import { elementCast } from './sql.js';
import { EnumLiteral, isPlainObject, scalarText } from './values.js';

const BINARY: Record<string, string> = {
  eq: '=',
  neq: '<>',
  lt: '<',
  lte: '<=',
  gt: '>',
  gte: '>=',
  like: 'like',
  ilike: 'ilike',
  regex: '~',
  iregex: '~*',
  startsWith: '^@',
};
const LIST_OPS: Record<string, string> = { eq: '=', contains: '@>', containedBy: '<@', overlaps: '&&' };

export function compileFilter(comp: Comp, table: Table, value: unknown, row: string): string {
  if (value === null || value === undefined) return 'true';
  const typeName = filterType(table.typeName);
  if (!isPlainObject(value)) fail(`Invalid input for ${typeName} type`);
  const obj = value as Record<string, unknown>;
  // Filterable columns by field name, each with its filter input type.
  const cols = new Map<string, [Column, string]>();
  for (const c of selectableColumns(table)) {
    const filterType = filterTypeOf(c.type);
    if (filterType) cols.set(c.fieldName, [c, filterType]);
  }
  const extra = Object.keys(obj).filter((k) => !cols.has(k) && !['and', 'or', 'not', 'nodeId'].includes(k));
  if (extra.length) fail(`Input for type ${typeName} contains extra keys ${JSON.stringify(extra)}`);
  const parts: string[] = [];
  for (const [key, v] of Object.entries(obj)) {
    const filterable = cols.get(key);
    if (filterable) {
      parts.push(...columnFilter(comp, filterable[0], filterable[1], v, row));
    } else if (key === 'nodeId') {
      if (v === null) continue;
      if (!isPlainObject(v)) fail('Invalid input for IDFilter type');
      const o = v as Record<string, unknown>;
      const bad = Object.keys(o).filter((k) => k !== 'eq');
      if (bad.length) fail(`Input for type IDFilter contains extra keys ${JSON.stringify(bad)}`);
      if (o.eq === undefined) continue;
      if (typeof o.eq !== 'string') fail('Invalid input for ID type');
      const id = decodeNodeId(o.eq as string);
      if (id.schema !== table.schema || id.table !== table.sqlName)
        fail('nodeId belongs to a different collection');
      parts.push(pkMatch(comp, table, id.values, row));
    } else if (key === 'and' || key === 'or') {
      if (v === null) continue;
      const list = Array.isArray(v) ? v : [v];
      const inner = list.map((x) => compileFilter(comp, table, x, row));
      if (!inner.length) continue;
      parts.push(`(${inner.join(key === 'and' ? ' and ' : ' or ')})`);
    } else if (key === 'not') {
      if (v === null) continue;
      const inner = compileFilter(comp, table, v, row);
      if (isPlainObject(v) && Object.keys(v).length === 0) continue;
      parts.push(`not (${inner})`);
    }
  }
  return parts.length ? `(${parts.join(' and ')})` : 'true';
}

export function pkMatch(comp: Comp, table: Table, values: unknown[], row: string): string {
  const pk = pkColumns(table);
  if (values.length !== pk.length) fail('Invalid value passed to nodeId argument. Error 9');
  return (
    '(' +
    pk
      .map((c, i) => {
        const v = values[i];
        const text = v === null ? null : typeof v === 'object' ? JSON.stringify(v) : String(v);
        return `${col(row, c.sqlName)} = ${comp.sql.param(text, elementCast(c.type))}`;
      })
      .join(' and ') +
    ')'
  );
}

/** `ft`: the column's filter input type (filterTypeOf). */
function columnFilter(comp: Comp, c: Column, ft: string, v: unknown, row: string): string[] {
  if (v === null) return [];
  if (!isPlainObject(v)) fail(`Invalid input for ${ft} type`);
  const ops = c.type.isArray
    ? [...LIST_FILTER_OPS]
    : c.type.enumRef
      ? enumFilterOps()
      : filterOps(c.type.scalar);
  const o = v as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !ops.includes(k));
  if (extra.length) fail(`Input for type ${ft} contains extra keys ${JSON.stringify(extra)}`);
  const expr = col(row, c.sqlName);
  const el = { ...c.type, isArray: false };
  const cast = elementCast(c.type);
  const out: string[] = [];
  for (const [op, x] of Object.entries(o)) {
    if (op === 'is') {
      if (x === null) fail('Error transpiling Is filter value type');
      const name = x instanceof EnumLiteral ? x.name : typeof x === 'string' ? x : undefined;
      if (name === 'NULL') out.push(`${expr} is null`);
      else if (name === 'NOT_NULL') out.push(`${expr} is not null`);
      else fail('Invalid input for FilterIs type');
    } else if (c.type.isArray) {
      if (x === null) {
        out.push(`${expr} ${LIST_OPS[op]} null`);
        continue;
      }
      const list = Array.isArray(x) ? x : [x];
      const items = list.map((y) => (y === null ? null : scalarText(el, y)));
      out.push(`${expr} ${LIST_OPS[op]} ${comp.sql.arrayParam(items, `${cast}[]`)}`);
    } else if (op === 'in') {
      if (x === null) {
        out.push('false');
        continue;
      }
      const list = Array.isArray(x) ? x : [x];
      const items = list.map((y) => (y === null ? null : scalarText(el, y)));
      out.push(`${expr} = any(${comp.sql.arrayParam(items, `${cast}[]`)})`);
    } else {
      if (Array.isArray(x) || isPlainObject(x))
        fail(`Invalid input for ${el.enumRef ? el.enumRef.name : el.scalar} type`);
      const text = x === null ? null : scalarText(el, x);
      const rhs = comp.sql.param(
        text,
        ['startsWith', 'like', 'ilike', 'regex', 'iregex'].includes(op) ? 'text' : cast,
      );
      out.push(`${op === 'startsWith' ? `(${expr})::text` : expr} ${BINARY[op]} ${rhs}`);
    }
  }
  return out;
}
