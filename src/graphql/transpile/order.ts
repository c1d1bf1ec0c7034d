/** Sort keys and cursors → ORDER BY lists, cursor values and the keyset condition for before/after. */
import type { CursorPlan, OrderKey } from '../plan/plan-types.js';
import { base64Json, col } from './json-value.js';
import { elementCast } from '../introspect/rules.js';
import type { Relationship } from '../introspect/model.js';
import { relJoin } from './filter.js';
import type { SqlBuilder } from './sql-text.js';

/**
 * The value of sort key `k` for row `row`: its column, or (Strata `related_filters`) the related
 * row's column read through the to-one relationships `k.via` by a scalar subquery under the
 * caller's role (NULL when there is no related row or RLS hides it).
 */
export function keyExpr(sql: SqlBuilder, k: OrderKey, row: string): string {
  if (!k.via.length) return col(row, k.column.sqlName);
  const aliases = k.via.map((_, i) => `${row}_v${i}`);
  const from = k.via
    .map((rel, i) => {
      const a = aliases[i] as string;
      const ref = `${sql.readFrom(rel.target)} as ${a}`;
      return i === 0 ? ref : `join ${ref} on ${relJoin(rel, a, aliases[i - 1] as string)}`;
    })
    .join(' ');
  const first = k.via[0] as Relationship;
  const last = aliases[aliases.length - 1] as string;
  return `(select ${col(last, k.column.sqlName)} from ${from} where ${relJoin(first, aliases[0] as string, row)} limit 1)`;
}

/** The page CTE's output column of key `i` (a related key has no column of the row to keep). */
export function pageKeyColumn(k: OrderKey, i: number): string {
  return k.via.length ? `__k${i}` : k.column.sqlName;
}

/** ORDER BY over `row`; `onPage`: `row` is the page CTE, whose columns pageKeyColumn names. */
export function orderSql(
  sql: SqlBuilder,
  keys: OrderKey[],
  row: string,
  reverse: boolean,
  onPage = false,
): string {
  return keys
    .map((k, i) => {
      const desc = k.desc !== reverse;
      const nullsFirst = k.nullsFirst !== reverse;
      const expr = onPage ? col(row, pageKeyColumn(k, i)) : keyExpr(sql, k, row);
      // A column without NULLs sorts the same either way: PostgreSQL's default placement (last
      // when ascending, first when descending) lets an index of either direction serve the order.
      if (!k.via.length && k.column.nullFree) return `${expr} ${desc ? 'desc' : 'asc'}`;
      return `${expr} ${desc ? 'desc' : 'asc'} nulls ${nullsFirst ? 'first' : 'last'}`;
    })
    .join(', ');
}

export function cursorSql(sql: SqlBuilder, keys: OrderKey[], row: string): string {
  return base64Json(`jsonb_build_array(${keys.map((k) => keyExpr(sql, k, row)).join(', ')})`);
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
    const ands = keys.slice(0, i).map((k, j) => equal(sql, k, values[j], value(k, j), row));
    ands.push(beyond(sql, key, values[i], value(key, i), row, after));
    ors.push(`(${ands.join(' and ')})`);
  });
  return `(${ors.join(' or ')})`;
}

function equal(sql: SqlBuilder, k: OrderKey, v: unknown, value: string, row: string): string {
  const c = keyExpr(sql, k, row);
  if (v === null || v === undefined) return `${c} is null`;
  return `${c} = ${value}`;
}

function beyond(
  sql: SqlBuilder,
  k: OrderKey,
  v: unknown,
  value: string,
  row: string,
  after: boolean,
): string {
  const c = keyExpr(sql, k, row);
  // In the sort order: does `c` come after `v`?
  const greater = k.desc !== after ? '>' : '<';
  const nullsComeAfter = after ? !k.nullsFirst : k.nullsFirst;
  if (v === null || v === undefined) return nullsComeAfter ? 'false' : `${c} is not null`;
  // Against a non-null cursor value pg_graphql 1.6 compares plainly: rows whose key is NULL are
  // on neither side of it (shared case resolve_connection_pagination_args, "Last before w/ complex
  // order"). Later pg_graphql puts them on their NULLS FIRST/LAST side; Strata keeps 1.6's rule.
  // The hasPreviousPage probe counts them as behind the cursor (`is not true`), as pg_graphql's
  // "first row not on the page" does.
  return `${c} ${greater} ${value}`;
}
