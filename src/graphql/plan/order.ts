/** `orderBy` and cursors: the sort keys of a connection and the decoded `before`/`after` cursor. */
import type { Relationship, Table } from '../introspect/model.js';
import { orderByType } from '../introspect/naming.js';
import { orderableColumns, pkColumns, relatedInputFields } from '../introspect/rules.js';
import { debugList, fail } from './errors.js';
import { RELATED_DEPTH_LIMIT } from './filter.js';
import type { CursorPlan, OrderKey } from './plan-types.js';
import { enumName, isPlainObject } from './values.js';

const DIRECTIONS: Record<string, [boolean, boolean]> = {
  AscNullsFirst: [false, true],
  AscNullsLast: [false, false],
  DescNullsFirst: [true, true],
  DescNullsLast: [true, false],
};

export function orderKeys(table: Table, value: unknown): OrderKey[] {
  const keys: OrderKey[] = [];
  if (value !== null && value !== undefined) {
    const list = Array.isArray(value) ? value : [value];
    for (const item of list) {
      // `[<Type>OrderBy!]`: a missing element (null, or an absent variable) is refused as pg_graphql does.
      if (item === null || item === undefined) fail('Invalid input for NonNull type');
      orderItem(table, item, [], keys);
    }
  }
  // pg_graphql always sorts by the primary key after the requested keys, even when they already
  // name a key column, so a cursor always carries the primary key after the orderBy values.
  for (const column of pkColumns(table)) keys.push({ via: [], column, desc: false, nullsFirst: false });
  return keys;
}

/**
 * One `<Type>OrderBy` object → its keys, in field order. A to-one relationship's field (Strata
 * `related_filters`) is the related type's OrderBy: its keys sort by the related row's columns.
 */
function orderItem(table: Table, item: unknown, via: Relationship[], keys: OrderKey[]): void {
  const typeName = orderByType(table.typeName);
  const cols = new Map(orderableColumns(table).map((c) => [c.fieldName, c]));
  const related = relatedInputFields(table, 'orderBy');
  if (!isPlainObject(item)) fail(`Invalid input for ${typeName} type`);
  const o = item as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !cols.has(k) && !related.has(k));
  if (extra.length) fail(`Input for type ${typeName} contains extra keys ${debugList(extra)}`);
  for (const [k, v] of Object.entries(o)) {
    if (v === null) continue;
    const rel = related.get(k);
    if (rel) {
      if (via.length >= RELATED_DEPTH_LIMIT)
        fail(`orderBy nests relationships deeper than the limit of ${RELATED_DEPTH_LIMIT}`);
      orderItem(rel.target, v, [...via, rel], keys);
      continue;
    }
    const d = DIRECTIONS[enumName(v) ?? ''];
    if (!d) fail('Invalid input for OrderByDirection type');
    const column = cols.get(k);
    if (!column) throw new Error(`internal error: ${typeName} key "${k}" passed the extra-keys check`);
    keys.push({ via, column, desc: d[0], nullsFirst: d[1] });
  }
}

export function decodeCursor(cursor: unknown, keys: OrderKey[], after: boolean): CursorPlan {
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
  return { values: parsed as unknown[], json, after };
}
