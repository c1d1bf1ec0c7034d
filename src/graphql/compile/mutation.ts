/** insertInto / update / deleteFrom collections: one data-modifying CTE, records built from its rows. */
import {
  insertInputType,
  mutationResponseType,
  updateInputType,
  type MutationKind,
} from '../introspect/naming.js';
import type { Column, Table } from '../introspect/model.js';
import { insertableColumns, selectableColumns, updatableColumns } from '../introspect/rules.js';
import type { Comp } from './context.js';
import { fail } from './errors.js';
import { compileFilter } from './filter.js';
import { nodeObject } from './node.js';
import { argsOf, collectFields, type Field } from './selection.js';
import { jsonObject, quoteIdent, quoteLiteral, tableRef } from './sql.js';
import { isPlainObject, sqlValue, structuralNumber } from './values.js';

function valueSql(comp: Comp, c: Column, v: unknown): string {
  const sv = sqlValue(c.type, v);
  if (sv.array) return comp.sql.arrayParam(sv.array, c.type.castName);
  return comp.sql.param(sv.text, c.type.castName);
}

function checkInput(typeName: string, v: unknown, cols: Map<string, Column>): Record<string, unknown> {
  if (!isPlainObject(v)) fail(`Invalid input for ${typeName} type`);
  const o = v as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !cols.has(k));
  if (extra.length) fail(`Input for type ${typeName} contains extra keys ${JSON.stringify(extra)}`);
  return o;
}

function responseSql(comp: Comp, table: Table, field: Field, kind: MutationKind, cte: string): string {
  const typeName = mutationResponseType(table.typeName, kind);
  const pairs: [string, string][] = collectFields(field.selections, typeName, comp).map((f) => {
    if (f.name === '__typename') return [f.alias, `${quoteLiteral(typeName)}::text`];
    if (f.name === 'affectedCount') return [f.alias, `(select count(*) from ${cte})::int`];
    if (f.name === 'records') {
      const r = comp.sql.alias();
      return [
        f.alias,
        `coalesce((select json_agg(${nodeObject(comp, table, f.selections, table.canSelectAll ? `${r}.__r` : r)}) from ${cte} as ${r}), '[]'::json)`,
      ];
    }
    return fail(`Unknown field "${f.name}" on type ${typeName}`);
  });
  return jsonObject(pairs);
}

/** RETURNING list: the whole row with SELECT on every column, else only the permitted columns. */
function returning(table: Table, alias: string): string {
  if (table.canSelectAll) return `${alias} as __r`;
  const cols = selectableColumns(table).map((c) => `${alias}.${quoteIdent(c.sqlName)}`);
  return cols.length ? cols.join(', ') : '1 as __none';
}

function atMostOf(args: Record<string, unknown>): number {
  const v = args.atMost ?? 1;
  if (typeof v !== 'number' || !Number.isInteger(v)) fail('Invalid input for Int type');
  return structuralNumber(v as number);
}

export function insertSql(comp: Comp, table: Table, field: Field): string {
  const args = argsOf(field, comp, ['objects']);
  if (args.objects === undefined || args.objects === null) fail('Invalid input for NonNull type');
  const list = Array.isArray(args.objects) ? args.objects : [args.objects];
  if (!list.length) fail('At least one record must be provided to objects');
  const typeName = insertInputType(table.typeName);
  const cols = new Map(insertableColumns(table).map((c) => [c.fieldName, c]));
  const rows = list.map((v) => checkInput(typeName, v, cols));
  const used = [...cols.values()].filter((c) => rows.some((r) => r[c.fieldName] !== undefined));
  let target = used;
  if (!target.length) {
    // No row names a column: insert defaults through the first one (the insert field exists only
    // when the table has an insertable column).
    const first = cols.values().next();
    if (first.done) throw new Error(`internal error: ${typeName} has no column`);
    target = [first.value];
  }
  const values = rows.map(
    (r) =>
      '(' +
      target
        .map((c) => (r[c.fieldName] === undefined ? 'default' : valueSql(comp, c, r[c.fieldName])))
        .join(', ') +
      ')',
  );
  const a = comp.sql.alias();
  const cte = `${a}_m`;
  return `with ${cte} as (insert into ${tableRef(table)} as ${a} (${target.map((c) => quoteIdent(c.sqlName)).join(', ')}) values ${values.join(', ')} returning ${returning(table, a)}) select ${responseSql(comp, table, field, 'Insert', cte)}`;
}

export function updateSql(comp: Comp, table: Table, field: Field): string {
  const args = argsOf(field, comp, ['set', 'filter', 'atMost']);
  const typeName = updateInputType(table.typeName);
  if (args.set === undefined || args.set === null) fail('Invalid input for NonNull type');
  const cols = new Map(updatableColumns(table).map((c) => [c.fieldName, c]));
  const set = checkInput(typeName, args.set, cols);
  const entries = Object.entries(set);
  if (!entries.length) fail('At least one mapping must be provided to set argument');
  const atMost = atMostOf(args);
  const a = comp.sql.alias();
  const assignments = entries.map(([k, v]) => {
    const c = cols.get(k);
    if (!c) throw new Error(`internal error: ${typeName} key "${k}" passed checkInput`);
    return `${quoteIdent(c.sqlName)} = ${valueSql(comp, c, v)}`;
  });
  const where = compileFilter(comp, table, args.filter, a);
  const cte = `${a}_m`;
  return (
    `with ${cte} as (update ${tableRef(table)} as ${a} set ${assignments.join(', ')} where ${where} returning ${returning(table, a)}) ` +
    `select case when (select count(*) from ${cte}) > ${atMost} then graphql.exception('update impacts too many records')::json else ${responseSql(comp, table, field, 'Update', cte)} end`
  );
}

export function deleteSql(comp: Comp, table: Table, field: Field): string {
  const args = argsOf(field, comp, ['filter', 'atMost']);
  const atMost = atMostOf(args);
  const a = comp.sql.alias();
  const where = compileFilter(comp, table, args.filter, a);
  const cte = `${a}_m`;
  return (
    `with ${cte} as (delete from ${tableRef(table)} as ${a} where ${where} returning ${returning(table, a)}) ` +
    `select case when (select count(*) from ${cte}) > ${atMost} then graphql.exception('delete impacts too many records')::json else ${responseSql(comp, table, field, 'Delete', cte)} end`
  );
}
