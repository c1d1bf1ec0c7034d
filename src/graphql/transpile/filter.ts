/** FilterPlan → a SQL boolean over a row. */
import type { FilterPlan, PkMatch } from '../build/plan-types.js';
import { col } from './json-value.js';
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
  }
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
