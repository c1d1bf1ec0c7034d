/** Sort keys and cursors → ORDER BY lists, cursor values and the keyset condition for before/after. */
import type { CursorPlan, OrderKey } from '../build/plan-types.js';
import { base64Json, col } from './json-value.js';
import { elementCast } from '../introspect/rules.js';
import type { SqlBuilder } from './sql-text.js';

export function orderSql(keys: OrderKey[], row: string, reverse: boolean): string {
  return keys
    .map((k) => {
      const desc = k.desc !== reverse;
      const nullsFirst = k.nullsFirst !== reverse;
      return `${col(row, k.column.sqlName)} ${desc ? 'desc' : 'asc'} nulls ${nullsFirst ? 'first' : 'last'}`;
    })
    .join(', ');
}

export function cursorSql(keys: OrderKey[], row: string): string {
  return base64Json(`jsonb_build_array(${keys.map((k) => col(row, k.column.sqlName)).join(', ')})`);
}

/** Rows strictly after (`cursor.after`) or before the cursor position in the order `keys`. */
export function cursorCondition(sql: SqlBuilder, keys: OrderKey[], cursor: CursorPlan, row: string): string {
  const ors: string[] = [];
  const { values, after } = cursor;
  keys = keys.slice(0, values.length);
  if (!keys.length) return 'true';
  const doc = sql.param({ text: cursor.json, cast: 'jsonb' });
  // The i-th cursor value as the key column's type, read by PostgreSQL from the cursor's JSON.
  const value = (k: OrderKey, i: number) => `(${doc} ->> ${i})::${elementCast(k.column.type)}`;
  keys.forEach((key, i) => {
    const ands = keys.slice(0, i).map((k, j) => equal(k, values[j], value(k, j), row));
    ands.push(beyond(key, values[i], value(key, i), row, after));
    ors.push(`(${ands.join(' and ')})`);
  });
  return `(${ors.join(' or ')})`;
}

function equal(k: OrderKey, v: unknown, value: string, row: string): string {
  const c = col(row, k.column.sqlName);
  if (v === null || v === undefined) return `${c} is null`;
  return `${c} = ${value}`;
}

function beyond(k: OrderKey, v: unknown, value: string, row: string, after: boolean): string {
  const c = col(row, k.column.sqlName);
  // In the sort order: does `c` come after `v`?
  const greater = k.desc !== after ? '>' : '<';
  const nullsComeAfter = after ? !k.nullsFirst : k.nullsFirst;
  if (v === null || v === undefined) return nullsComeAfter ? 'false' : `${c} is not null`;
  // Against a non-null cursor value pg_graphql compares plainly: rows whose key is NULL are not
  // on either side of it.
  return `${c} ${greater} ${value}`;
}
