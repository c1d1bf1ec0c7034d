/** A row of a table type → json_build_object of the selected fields (relations as correlated subqueries). */
import type { SelectionSetNode } from 'graphql';
import type { Func, Relationship, Table } from '../introspect/model.js';
import { nodeFields } from '../introspect/rules.js';
import type { Comp } from './context.js';
import { connectionSql } from './connection.js';
import { fail } from './errors.js';
import { col, jsonOf, nodeIdOf } from './json-value.js';
import { collectFields, type Field } from './selection.js';
import { jsonObject, quoteIdent, quoteLiteral, tableRef } from './sql.js';

export type QuoteStyle = 'single' | 'double';

export function unknownField(name: string, typeName: string, style: QuoteStyle): never {
  return style === 'single'
    ? fail(`Unknown field '${name}' on type '${typeName}'`)
    : fail(`Unknown field "${name}" on type ${typeName}`);
}

/**
 * `row` gives the columns (`(row)."col"`); `rec` is the whole row typed as the table, for computed
 * fields (defaults to `row`, which is then a table alias or a row value).
 */
export function nodeObject(
  comp: Comp,
  table: Table,
  sets: SelectionSetNode[],
  row: string,
  style: QuoteStyle = 'single',
  rec = row,
): string {
  const fields = collectFields(sets, table.typeName, comp, ['Node']);
  const pairs: [string, string][] = [];
  for (const f of fields) pairs.push([f.alias, nodeField(comp, table, f, row, rec, style)]);
  return jsonObject(pairs);
}

/** The SQL columns a node selection reads from its row, and whether it needs the whole row. */
export function nodeNeeds(
  comp: Comp,
  table: Table,
  sets: SelectionSetNode[],
): { columns: Set<string>; wholeRow: boolean } {
  const columns = new Set<string>();
  let wholeRow = false;
  const owners = nodeFields(table);
  for (const f of collectFields(sets, table.typeName, comp, ['Node'])) {
    const o = owners.get(f.name);
    const read =
      o?.kind === 'nodeId'
        ? table.primaryKey
        : o?.kind === 'column'
          ? [o.column.sqlName]
          : o?.kind === 'relationship'
            ? o.relationship.localColumns
            : [];
    for (const n of read) columns.add(n);
    if (o?.kind === 'function') wholeRow = true;
  }
  return { columns, wholeRow };
}

function nodeField(comp: Comp, table: Table, f: Field, row: string, rec: string, style: QuoteStyle): string {
  if (f.name === '__typename') return `${quoteLiteral(table.typeName)}::text`;
  const o = nodeFields(table).get(f.name);
  switch (o?.kind) {
    case 'nodeId':
      return nodeIdOf(table, row);
    case 'column':
      return jsonOf(col(row, o.column.sqlName), o.column.type);
    case 'function':
      return computedField(comp, o.fn, f, rec, style);
    case 'relationship':
      return relationField(comp, o.relationship, f, row);
    default:
      return unknownField(f.name, table.typeName, style);
  }
}

function relationField(comp: Comp, rel: Relationship, f: Field, row: string): string {
  const a = comp.sql.alias();
  const join = (alias: string) =>
    rel.targetColumns
      .map((tc, i) => {
        const lc = rel.localColumns[i];
        // Only a foreign_keys comment directive can pair lists of different lengths.
        if (lc === undefined)
          throw new Error(`relationship ${rel.fieldName} has fewer local than target columns`);
        return `${col(alias, tc)} = ${col(row, lc)}`;
      })
      .join(' and ');
  if (rel.kind === 'toMany') return connectionSql(comp, rel.target, f, { from: tableRef(rel.target), join });
  return `(select ${nodeObject(comp, rel.target, f.selections, a)} from ${tableRef(rel.target)} as ${a} where ${join(a)} limit 1)`;
}

export function functionRef(fn: Func): string {
  return `${quoteIdent(fn.schema)}.${quoteIdent(fn.sqlName)}`;
}

/** A function call used as a field value: scalar, row object, or connection over its result set. */
export function functionValue(comp: Comp, fn: Func, call: string, f: Field, style: QuoteStyle): string {
  if (fn.returnTable) {
    if (fn.setof && !fn.rowsOne) return connectionSql(comp, fn.returnTable, f, { from: call });
    const a = comp.sql.alias();
    return `(select ${nodeObject(comp, fn.returnTable, f.selections, a, style)} from ${call} as ${a} where not (${a} is null) limit 1)`;
  }
  return jsonOf(call, fn.returns);
}

function computedField(comp: Comp, fn: Func, f: Field, row: string, style: QuoteStyle): string {
  return functionValue(comp, fn, `${functionRef(fn)}(${row})`, f, style);
}
