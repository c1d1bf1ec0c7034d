/** NodePlan → json_build_object of the selected fields (relationships and computed fields as correlated subqueries). */
import type { Func } from '../introspect/model.js';
import type { FunctionResultPlan, NodeFieldPlan, NodePlan } from '../plan/plan-types.js';
import { connectionSql } from './connection.js';
import { col, jsonOf, nodeIdOf } from './json-value.js';
import { jsonObject, quoteIdent, quoteLiteral, type SqlBuilder } from './sql-text.js';

/**
 * `row` gives the columns (`(row)."col"`); `rec` is the whole row typed as the table, for computed
 * fields (defaults to `row`, which is then a table alias or a row value).
 */
export function nodeObjectSql(sql: SqlBuilder, node: NodePlan, row: string, rec = row): string {
  return jsonObject(node.fields.map(({ alias, field }) => [alias, nodeFieldSql(sql, node, field, row, rec)]));
}

function nodeFieldSql(sql: SqlBuilder, node: NodePlan, f: NodeFieldPlan, row: string, rec: string): string {
  switch (f.kind) {
    case 'typename':
      return `${quoteLiteral(f.name)}::text`;
    case 'nodeId':
      return nodeIdOf(node.table, row);
    case 'column':
      return jsonOf(col(row, f.column.sqlName), f.column.type);
    case 'computed':
      return functionResultSql(sql, f.value, `${functionRef(f.fn)}(${rec})`);
    case 'toMany':
    case 'toOne': {
      const rel = f.rel;
      const a = sql.alias();
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
      const from = sql.readFrom(rel.target);
      if (f.kind === 'toMany')
        return connectionSql(sql, f.connection, { from, join, row: (b) => sql.rowOf(rel.target, b) });
      const object = nodeObjectSql(sql, f.node, a, sql.rowOf(rel.target, a));
      return `(select ${object} from ${from} as ${a} where ${join(a)} limit 1)`;
    }
  }
}

export function functionRef(fn: Func): string {
  return `${quoteIdent(fn.schema)}.${quoteIdent(fn.sqlName)}`;
}

/** A function call used as a field value: scalar, row object, or connection over its result set. */
export function functionResultSql(sql: SqlBuilder, r: FunctionResultPlan, call: string): string {
  switch (r.kind) {
    case 'scalar':
      return jsonOf(call, r.fn.returns);
    case 'scalarList': {
      const a = sql.alias();
      const value = jsonOf(`${a}.v`, r.fn.returns);
      const page = `select * from ${call} with ordinality as ${a}(v, n) order by ${a}.n limit ${r.limit}${r.offset ? ` offset ${r.offset}` : ''}`;
      return `(select coalesce(json_agg(${value} order by ${a}.n), '[]'::json) from (${page}) as ${a})`;
    }
    case 'connection':
      return connectionSql(sql, r.connection, { from: call });
    case 'row': {
      const a = sql.alias();
      return `(select ${nodeObjectSql(sql, r.node, a)} from ${call} as ${a} where not (${a} is null) limit 1)`;
    }
  }
}
