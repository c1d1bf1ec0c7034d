/** Mutation plans → one data-modifying CTE, the response's records built from its rows. */
import type { MutationResponsePlan, RootPlan } from '../plan/plan-types.js';
import type { Table } from '../introspect/model.js';
import { selectableColumns } from '../introspect/rules.js';
import { filterSql } from './filter.js';
import { nodeObjectSql } from './node.js';
import { jsonObject, quoteIdent, quoteLiteral, type SqlBuilder, tableRef } from './sql-text.js';

export function responseSql(sql: SqlBuilder, r: MutationResponsePlan, cte: string): string {
  const pairs = r.fields.map((f): [string, string] => {
    if (f.kind === 'typename') return [f.alias, `${quoteLiteral(f.name)}::text`];
    if (f.kind === 'affectedCount') return [f.alias, `(select count(*) from ${cte})::int`];
    const a = sql.alias();
    const row = r.table.canSelectAll ? `${a}.__r` : a;
    return [
      f.alias,
      `coalesce((select json_agg(${nodeObjectSql(sql, f.node, row)}) from ${cte} as ${a}), '[]'::json)`,
    ];
  });
  return jsonObject(pairs);
}

/**
 * Makes the response's reads of `table` (relationships, relationship filters, sort keys) see the
 * rows the CTEs `ctes` inserted into it too (each returned `returning(table, …)`), which the
 * statement's snapshot misses. PostgreSQL applied the table's SELECT policies to them as to any
 * INSERT … RETURNING (a row the caller may not see was an error), so only rows the caller may see
 * are added, with the columns the caller may select. Returns the WITH item to add after `ctes`
 * when `sql.readExtra(table)` says the response read them.
 */
export function readInserted(sql: SqlBuilder, table: Table, ctes: string[]): string | undefined {
  const cols = table.canSelectAll ? undefined : selectableColumns(table).map((c) => c.sqlName);
  if (cols?.length === 0) return undefined;
  const list = cols ? cols.map((c) => `p.${quoteIdent(c)}`).join(', ') : '(p.__r).*';
  const name = `${sql.alias()}_n`;
  sql.readAlso(table, name, cols);
  return `${name} as (${ctes.map((c) => `select ${list} from ${c} as p`).join(' union all ')})`;
}

/** RETURNING list: the whole row with SELECT on every column, else only the permitted columns. */
export function returning(table: Table, alias: string): string {
  if (table.canSelectAll) return `${alias} as __r`;
  const cols = selectableColumns(table).map((c) => `${alias}.${quoteIdent(c.sqlName)}`);
  return cols.length ? cols.join(', ') : '1 as __none';
}

type MutationPlan = Extract<RootPlan, { kind: 'insert' | 'update' | 'delete' }>;

export function mutationSql(sql: SqlBuilder, m: MutationPlan): string {
  const a = sql.alias();
  const cte = `${a}_m`;
  const target = tableRef(m.table);
  let change: string;
  if (m.kind === 'insert') {
    const values = m.rows.map(
      (r) => `(${r.map((v) => (v === 'default' ? 'default' : sql.param(v))).join(', ')})`,
    );
    const columns = m.columns.map((c) => quoteIdent(c.sqlName)).join(', ');
    change = `insert into ${target} as ${a} (${columns}) values ${values.join(', ')}`;
    const oc = m.onConflict;
    if (oc) {
      const on = oc.target.map((c) => quoteIdent(c.sqlName)).join(', ');
      if (!oc.update.length) change += ` on conflict (${on}) do nothing`;
      else {
        const set = oc.update.map((c) => `${quoteIdent(c.sqlName)} = excluded.${quoteIdent(c.sqlName)}`);
        const where = filterSql(sql, oc.filter, a);
        change += ` on conflict (${on}) do update set ${set.join(', ')}${where === 'true' ? '' : ` where ${where}`}`;
      }
    }
  } else if (m.kind === 'update') {
    const assignments = m.set.map((s) => `${quoteIdent(s.column.sqlName)} = ${sql.param(s.value)}`);
    change = `update ${target} as ${a} set ${assignments.join(', ')} where ${filterSql(sql, m.filter, a)}`;
  } else change = `delete from ${target} as ${a} where ${filterSql(sql, m.filter, a)}`;
  let head = `with ${cte} as (${change} returning ${returning(m.table, a)})`;
  if (m.kind === 'insert') {
    const news = m.readsInserted ? readInserted(sql, m.table, [cte]) : undefined;
    const response = responseSql(sql, m.response, cte);
    if (news && sql.readExtra(m.table)) head += `, ${news}`;
    return `${head} select ${response}`;
  }
  head += ' select ';
  const response = responseSql(sql, m.response, cte);
  const verb = m.kind === 'update' ? 'update' : 'delete';
  return `${head}case when (select count(*) from ${cte}) > ${m.atMost} then graphql.exception('${verb} impacts too many records')::json else ${response} end`;
}
