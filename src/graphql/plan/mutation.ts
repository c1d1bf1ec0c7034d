/** insertInto / update / deleteFrom collections: arguments and the selected response → a RootPlan. */
import type { Column, Table } from '../introspect/model.js';
import {
  constraintType,
  insertInputType,
  type MutationKind,
  mutationResponseType,
  onConflictType,
  updateColumnType,
  updateInputType,
} from '../introspect/naming.js';
import { anyColumn, insertableColumns, updatableColumns, upsertOptions } from '../introspect/rules.js';
import { debugList, fail } from './errors.js';
import { buildFilter } from './filter.js';
import { nestedInsertRows, usesNestedInsert } from './nested-insert.js';
import { nodePlan } from './node.js';
import type { MutationResponsePlan, RootPlan } from './plan-types.js';
import { argsOf, collectFields, type Ctx, type Field } from './selection.js';
import { enumName, isPlainObject, valueParam } from './values.js';

function checkInput(typeName: string, v: unknown, cols: Map<string, Column>): Record<string, unknown> {
  if (!isPlainObject(v)) fail(`Invalid input for ${typeName} type`);
  const o = v as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !cols.has(k));
  if (extra.length) fail(`Input for type ${typeName} contains extra keys ${debugList(extra)}`);
  return o;
}

function response(ctx: Ctx, table: Table, field: Field, kind: MutationKind): MutationResponsePlan {
  const typeName = mutationResponseType(table.typeName, kind);
  const fields = collectFields(field.selections, typeName, ctx).map(
    (f): MutationResponsePlan['fields'][number] => {
      if (f.name === '__typename') return { alias: f.alias, kind: 'typename', name: typeName };
      if (f.name === 'affectedCount') return { alias: f.alias, kind: 'affectedCount' };
      if (f.name === 'records')
        return { alias: f.alias, kind: 'records', node: nodePlan(ctx, table, f.selections, 'single') };
      return fail(`Unknown field "${f.name}" on type ${typeName}`);
    },
  );
  return { kind, table, fields };
}

/**
 * `atMost: Int! = 1`, read as pg_graphql reads it (builder.rs read_argument_at_most): a value that
 * fails that type (null, a string, a float, a list...) is not an error, it is the default, 1.
 */
function atMostOf(args: Record<string, unknown>): number {
  const v = args.atMost;
  return typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= 2 ** 63 ? v : 1;
}

export function insertPlan(ctx: Ctx, table: Table, field: Field): RootPlan {
  const upsert = upsertOptions(table);
  const args = argsOf(field, ctx, upsert ? ['objects', 'onConflict'] : ['objects']);
  if (args.objects === undefined || args.objects === null) fail('Invalid input for NonNull type');
  const list = Array.isArray(args.objects) ? args.objects : [args.objects];
  if (!list.length) fail('At least one record must be provided to objects');
  const onConflict = upsert ? args.onConflict : undefined;
  if (usesNestedInsert(table, list)) {
    if (onConflict !== undefined && onConflict !== null)
      fail('onConflict cannot be combined with nested inserts');
    const rows = nestedInsertRows(table, list);
    return { kind: 'nestedInsert', table, rows, response: response(ctx, table, field, 'Insert') };
  }
  const typeName = insertInputType(table.typeName);
  const cols = new Map(insertableColumns(table).map((c) => [c.fieldName, c]));
  // `[<Type>InsertInput!]!`: a missing element is refused as pg_graphql does. Each record is
  // checked whole (extra keys, then its values in the type's field order) before the next one, as
  // pg_graphql validates the argument: the first bad record, and its first bad field, is reported.
  const input = list.map((v) => {
    if (v === null || v === undefined) fail('Invalid input for NonNull type');
    const r = checkInput(typeName, v, cols);
    const values = new Map<Column, ReturnType<typeof valueParam>>();
    for (const c of cols.values())
      if (r[c.fieldName] !== undefined) values.set(c, valueParam(c.type, r[c.fieldName]));
    return values;
  });
  let columns = [...cols.values()].filter((c) => input.some((r) => r.has(c)));
  if (!columns.length) {
    // No row names a column: insert defaults through the first insertable one, a serial key when
    // that is all the input type leaves out (the insert field exists only when the role may insert
    // some column).
    const first = cols.values().next().value ?? anyColumn(table, (c) => c.canInsert);
    if (!first) throw new Error(`internal error: ${typeName} has no column`);
    columns = [first];
  }
  const rows = input.map((r) => columns.map((c) => r.get(c) ?? 'default'));
  const plan: RootPlan = {
    kind: 'insert',
    table,
    columns,
    rows,
    response: response(ctx, table, field, 'Insert'),
  };
  if (upsert && onConflict !== undefined && onConflict !== null)
    plan.onConflict = onConflictPlan(table, upsert, onConflict);
  // As a nested insert's do (the rows an upsert updates would be read twice: not with onConflict).
  else if (table.schemaInfo.strata.nestedMutations) plan.readsInserted = true;
  return plan;
}

/** Strata `upsert`: the `onConflict` argument, every name checked against its enum. */
function onConflictPlan(
  table: Table,
  upsert: NonNullable<ReturnType<typeof upsertOptions>>,
  v: unknown,
): NonNullable<Extract<RootPlan, { kind: 'insert' }>['onConflict']> {
  const typeName = onConflictType(table.typeName);
  if (!isPlainObject(v)) fail(`Invalid input for ${typeName} type`);
  const o = v as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !['constraint', 'updateColumns', 'filter'].includes(k));
  if (extra.length) fail(`Input for type ${typeName} contains extra keys ${debugList(extra)}`);
  if (
    o.constraint === undefined ||
    o.constraint === null ||
    o.updateColumns === undefined ||
    o.updateColumns === null
  )
    fail('Invalid input for NonNull type');
  const name = enumName(o.constraint);
  const target = upsert.targets.find((t) => t.name === name);
  if (!target) fail(`Invalid input for ${constraintType(table.typeName)} type`);
  const list = Array.isArray(o.updateColumns) ? o.updateColumns : [o.updateColumns];
  const update: Column[] = [];
  for (const x of list) {
    const column = upsert.updatable.find((c) => c.fieldName === enumName(x));
    if (!column) fail(`Invalid input for ${updateColumnType(table.typeName)} type`);
    if (!update.includes(column)) update.push(column);
  }
  return { target: target.columns, update, filter: buildFilter(table, o.filter) };
}

export function updatePlan(ctx: Ctx, table: Table, field: Field): RootPlan {
  const args = argsOf(field, ctx, ['set', 'filter', 'atMost']);
  const typeName = updateInputType(table.typeName);
  if (args.set === undefined || args.set === null) fail('Invalid input for NonNull type');
  const cols = new Map(updatableColumns(table).map((c) => [c.fieldName, c]));
  const o = checkInput(typeName, args.set, cols);
  // In the type's field order (see insertPlan).
  const columns = [...cols.values()].filter((c) => Object.hasOwn(o, c.fieldName));
  if (!columns.length) fail('At least one mapping must be provided to set argument');
  const atMost = atMostOf(args);
  const set = columns.map((column) => ({ column, value: valueParam(column.type, o[column.fieldName]) }));
  const filter = buildFilter(table, args.filter);
  return { kind: 'update', table, set, filter, atMost, response: response(ctx, table, field, 'Update') };
}

export function deletePlan(ctx: Ctx, table: Table, field: Field): RootPlan {
  const args = argsOf(field, ctx, ['filter', 'atMost']);
  const atMost = atMostOf(args);
  const filter = buildFilter(table, args.filter);
  return { kind: 'delete', table, filter, atMost, response: response(ctx, table, field, 'Delete') };
}
