/** FilterPlan → a SQL boolean over a row. */
import type { FilterPlan, PkMatch } from '../plan/plan-types.js';
import { col } from './json-value.js';
import type { Relationship } from '../introspect/model.js';
import type { SqlBuilder } from './sql-text.js';

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

/** The filter over row `row`; `true` when it keeps every row. */
export function filterSql(sql: SqlBuilder, f: FilterPlan, row: string): string {
  switch (f.kind) {
    case 'true':
      return 'true';
    case 'false':
      return 'false';
    case 'all':
      return `(${f.parts.map((p) => filterSql(sql, p, row)).join(' and ')})`;
    case 'group':
      return `(${f.parts.map((p) => filterSql(sql, p, row)).join(f.op === 'and' ? ' and ' : ' or ')})`;
    case 'not':
      return `not (${filterSql(sql, f.inner, row)})`;
    case 'null':
      return `${col(row, f.column.sqlName)} is ${f.negated ? 'not ' : ''}null`;
    case 'compare': {
      const expr = col(row, f.column.sqlName);
      return `${f.columnAsText ? `(${expr})::text` : expr} ${BINARY[f.op]} ${sql.param(f.value)}`;
    }
    case 'list':
      return `${col(row, f.column.sqlName)} ${LIST_OPS[f.op]} ${f.value ? sql.param(f.value) : 'null'}`;
    case 'in':
      return `${col(row, f.column.sqlName)} = any(${sql.param(f.value)})`;
    case 'pk':
      return pkMatchSql(sql, f.match, row);
    case 'related':
      return relatedSql(sql, f, row);
  }
}

/**
 * A relationship filter as EXISTS over the related table under the caller's role, so its RLS
 * decides which rows count: `some` (and to-one) — a related row matches; `none` — none does;
 * `every` — no related row fails to match (a NULL result counts as not matching).
 */
function relatedSql(sql: SqlBuilder, f: Extract<FilterPlan, { kind: 'related' }>, row: string): string {
  const b = sql.alias();
  const join = relJoin(f.rel, b, row);
  const inner = filterSql(sql, f.inner, b);
  const from = `select 1 from ${sql.readFrom(f.rel.target)} as ${b} where ${join}`;
  if (f.quantifier === 'some') return `exists (${from}${inner === 'true' ? '' : ` and ${inner}`})`;
  if (f.quantifier === 'none') return `not exists (${from}${inner === 'true' ? '' : ` and ${inner}`})`;
  return `not exists (${from} and (${inner}) is not true)`;
}

/** The join condition between `row` (the relationship's owner) and `target` (its other end). */
export function relJoin(rel: Relationship, target: string, row: string): string {
  return rel.localColumns
    .map((l, i) => `${col(target, rel.targetColumns[i] as string)} = ${col(row, l)}`)
    .join(' and ');
}

/** The primary key columns equal to their values, parenthesized. */
export function pkMatchSql(sql: SqlBuilder, m: PkMatch, row: string): string {
  return `(${pkConditions(sql, m, row)})`;
}

/** The primary key columns equal to their values, joined by `and`. */
export function pkConditions(sql: SqlBuilder, m: PkMatch, row: string): string {
  const conditions = m.columns.map((c, i) => {
    const value = m.values[i];
    if (value === undefined) throw new Error('internal error: a primary key match without a value');
    return `${col(row, c.sqlName)} = ${sql.param(value)}`;
  });
  return conditions.join(' and ');
}
