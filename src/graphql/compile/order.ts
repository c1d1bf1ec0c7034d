/** `orderBy` and cursors: the sort keys of a connection and the keyset condition for before/after. */
import { orderByType } from '../introspect/naming.js';
import type { Column, Table } from '../introspect/model.js';
import { isOrderable, pkColumns, selectableColumns } from '../introspect/rules.js';
import type { Comp } from './context.js';
import { fail } from './errors.js';
import { base64Json, col } from './json-value.js';
import { elementCast } from './sql.js';
import { enumName, isPlainObject } from './values.js';

export interface OrderKey {
  column: Column;
  desc: boolean;
  nullsFirst: boolean;
}

const DIRECTIONS: Record<string, [boolean, boolean]> = {
  AscNullsFirst: [false, true],
  AscNullsLast: [false, false],
  DescNullsFirst: [true, true],
  DescNullsLast: [true, false],
};

export function orderKeys(table: Table, value: unknown): OrderKey[] {
  const keys: OrderKey[] = [];
  const typeName = orderByType(table.typeName);
  if (value !== null && value !== undefined) {
    const list = Array.isArray(value) ? value : [value];
    const cols = new Map(
      selectableColumns(table)
        .filter(isOrderable)
        .map((c) => [c.fieldName, c]),
    );
    for (const item of list) {
      if (!isPlainObject(item)) fail(`Invalid input for ${typeName} type`);
      const o = item as Record<string, unknown>;
      const extra = Object.keys(o).filter((k) => !cols.has(k));
      if (extra.length) fail(`Input for type ${typeName} contains extra keys ${JSON.stringify(extra)}`);
      for (const [k, v] of Object.entries(o)) {
        if (v === null) continue;
        const d = DIRECTIONS[enumName(v) ?? ''];
        if (!d) fail('Invalid input for OrderByDirection type');
        const column = cols.get(k);
        if (!column) throw new Error(`internal error: ${typeName} key "${k}" passed the extra-keys check`);
        keys.push({ column, desc: d[0], nullsFirst: d[1] });
      }
    }
  }
  // pg_graphql always sorts by the primary key after the requested keys, even when they already
  // name a key column, so a cursor always carries the primary key after the orderBy values.
  for (const column of pkColumns(table)) keys.push({ column, desc: false, nullsFirst: false });
  return keys;
}

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

export interface DecodedCursor {
  /** The cursor's values, for null checks; compared values are read from `json` in SQL. */
  values: unknown[];
  /** The cursor's JSON text, bound once: SQL reads each value from it (no precision lost in JS). */
  json: string;
}

export function decodeCursor(cursor: unknown, keys: OrderKey[]): DecodedCursor {
  if (typeof cursor !== 'string') fail('Invalid input for Cursor type');
  let parsed: unknown;
  let json: string;
  try {
    json = Buffer.from(cursor as string, 'base64').toString('utf8');
    parsed = JSON.parse(json);
  } catch {
    return fail('Failed to decode cursor, error 1');
  }
  if (!Array.isArray(parsed)) fail('Failed to decode cursor, error 2');
  if ((parsed as unknown[]).length > keys.length) fail('orderBy clause incompatible with pagination cursor');
  return { values: parsed as unknown[], json };
}

/** Rows strictly after (`after`) or before (`!after`) the cursor position in the order `keys`. */
export function cursorCondition(
  comp: Comp,
  keys: OrderKey[],
  cursor: DecodedCursor,
  row: string,
  after: boolean,
): string {
  const ors: string[] = [];
  const { values } = cursor;
  keys = keys.slice(0, values.length);
  if (!keys.length) return 'true';
  const doc = comp.sql.param(cursor.json, 'jsonb');
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
