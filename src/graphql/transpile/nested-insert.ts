/**
 * Strata `nested_mutations` → one statement of data-modifying CTEs, one CTE per record. Each
 * inserts exactly one row, so its RETURNING is that row: a record's foreign key columns read the
 * generated key of the record they point to with a scalar subquery on that record's CTE. Rows are
 * never matched by RETURNING order (which PostgreSQL does not guarantee for a multi-row insert).
 * A record's CTE comes after the CTEs it reads (WITH items see only earlier items); PostgreSQL
 * runs every data-modifying CTE once, as the caller, and checks the foreign keys at the end of
 * the statement, so an error anywhere (RLS WITH CHECK included) writes nothing.
 */
import type { InsertRowPlan, RootPlan } from '../build/plan-types.js';
import { quoteIdent, type SqlBuilder, tableRef } from './sql-text.js';
import { responseSql, returning } from './mutation.js';

type NestedInsertPlan = Extract<RootPlan, { kind: 'nestedInsert' }>;

/** A created record's CTE: `key(column)` is a scalar subquery reading one of its columns. */
interface Created {
  cte: string;
  key: (sqlName: string) => string;
}

export function nestedInsertSql(sql: SqlBuilder, plan: NestedInsertPlan): string {
  const ctes: string[] = [];
  const top = plan.rows.map((row) => emit(sql, row, ctes, { top: true, need: [] }).cte);
  const m = `${sql.alias()}_m`;
  ctes.push(`${m} as (${top.map((c) => `select * from ${c}`).join(' union all ')})`);
  return `with ${ctes.join(', ')} select ${responseSql(sql, plan.response, m)}`;
}

/**
 * Appends the CTEs creating `row` (its parents first, then itself, then its children) and returns
 * its own. `need`: columns the caller reads from it; `from`: the key filling its foreign key.
 */
function emit(
  sql: SqlBuilder,
  row: InsertRowPlan,
  ctes: string[],
  o: { top: boolean; need: string[]; from?: { columns: string[]; values: string[] } },
): Created {
  const columns: string[] = [];
  const values: string[] = [];
  for (const v of row.values) {
    columns.push(quoteIdent(v.column.sqlName));
    values.push(sql.param(v.value));
  }
  if (o.from) {
    columns.push(...o.from.columns.map(quoteIdent));
    values.push(...o.from.values);
  }
  for (const p of row.parents) {
    const parent = emit(sql, p.row, ctes, { top: false, need: p.rel.targetColumns });
    columns.push(...p.rel.localColumns.map(quoteIdent));
    values.push(...p.rel.targetColumns.map(parent.key));
  }
  const a = sql.alias();
  const cte = `${a}_i`;
  const target = tableRef(row.table);
  const change = columns.length
    ? `insert into ${target} as ${a} (${columns.join(', ')}) values (${values.join(', ')})`
    : `insert into ${target} as ${a} default values`;
  let key: Created['key'];
  let ret: string;
  if (o.top) {
    // The response reads the top-level records as a flat insert's do.
    ret = ` returning ${returning(row.table, a)}`;
    const col = row.table.canSelectAll
      ? (c: string) => `(p.__r).${quoteIdent(c)}`
      : (c: string) => `p.${quoteIdent(c)}`;
    key = (c) => `(select ${col(c)} from ${cte} as p)`;
  } else {
    const need = [...new Set([...o.need, ...row.children.flatMap((c) => c.rel.localColumns)])];
    ret = need.length ? ` returning ${need.map((c) => `${a}.${quoteIdent(c)}`).join(', ')}` : '';
    key = (c) => `(select p.${quoteIdent(c)} from ${cte} as p)`;
  }
  ctes.push(`${cte} as (${change}${ret})`);
  for (const c of row.children) {
    const from = { columns: c.rel.targetColumns, values: c.rel.localColumns.map(key) };
    const leaves = c.rows.filter((r) => !r.parents.length && !r.children.length);
    if (leaves.length > 1) emitLeaves(sql, leaves, ctes, from);
    for (const child of c.rows)
      if (leaves.length <= 1 || !leaves.includes(child))
        emit(sql, child, ctes, { top: false, need: [], from });
  }
  return { cte, key };
}

/**
 * Sibling records that no other record reads a key from, in one multi-row insert (nothing needs
 * to tell their rows apart): every column any of them names, DEFAULT where one does not.
 */
function emitLeaves(
  sql: SqlBuilder,
  rows: InsertRowPlan[],
  ctes: string[],
  from: { columns: string[]; values: string[] },
): void {
  const first = rows[0];
  if (!first) return;
  const named = first.table.columns.filter((c) => rows.some((r) => r.values.some((v) => v.column === c)));
  const values = rows.map((r) => {
    const own = named.map((c) => {
      const v = r.values.find((x) => x.column === c);
      return v ? sql.param(v.value) : 'default';
    });
    return `(${[...own, ...from.values].join(', ')})`;
  });
  const columns = [...named.map((c) => c.sqlName), ...from.columns].map(quoteIdent);
  const a = sql.alias();
  ctes.push(
    `${a}_i as (insert into ${tableRef(first.table)} as ${a} (${columns.join(', ')}) values ${values.join(', ')})`,
  );
}
