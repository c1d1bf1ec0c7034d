/**
 * Strata `nested_mutations` → one statement of data-modifying CTEs, one CTE per record. Each
 * inserts exactly one row, so its RETURNING is that row: a record's foreign key columns read the
 * generated key of the record they point to with a scalar subquery on that record's CTE. Rows are
 * never matched by RETURNING order (which PostgreSQL does not guarantee for a multi-row insert).
 * A record's CTE comes after the CTEs it reads (WITH items see only earlier items); PostgreSQL
 * runs every data-modifying CTE once, as the caller, and checks the foreign keys at the end of
 * the statement, so an error anywhere (RLS WITH CHECK included) writes nothing. The response is
 * built in the same statement, whose snapshot misses the inserted rows: its reads of a table the
 * mutation inserted into add them from the CTEs' RETURNING (SqlBuilder.readAlso).
 */
import type { InsertRowPlan, RootPlan } from '../plan/plan-types.js';
import type { Table } from '../introspect/model.js';
import { selectableColumns } from '../introspect/rules.js';
import { readInserted, responseSql, returning } from './mutation.js';
import { quoteIdent, type SqlBuilder, tableRef } from './sql-text.js';

type NestedInsertPlan = Extract<RootPlan, { kind: 'nestedInsert' }>;

/** The statement being assembled: its WITH items, and per table the CTEs inserting into it. */
interface Emitted {
  sql: SqlBuilder;
  ctes: string[];
  inserted: Map<string, { table: Table; ctes: string[] }>;
}

export function nestedInsertSql(sql: SqlBuilder, plan: NestedInsertPlan): string {
  const e: Emitted = { sql, ctes: [], inserted: new Map() };
  const top = plan.rows.map((row) => emit(e, row, { top: true, need: [] }));
  const m = `${sql.alias()}_m`;
  e.ctes.push(`${m} as (${top.map((c) => `select * from ${c}`).join(' union all ')})`);
  // The response reads each table the mutation inserted into together with the inserted rows.
  const news = [...e.inserted.values()].flatMap(({ table, ctes }) => {
    const cte = readInserted(sql, table, ctes);
    return cte ? [{ table, cte }] : [];
  });
  const response = responseSql(sql, plan.response, m);
  for (const n of news) if (sql.readExtra(n.table)) e.ctes.push(n.cte);
  return `with ${e.ctes.join(', ')} select ${response}`;
}

/** Records a CTE inserting into `t` (its RETURNING: `returning(t, …)` first). */
function inserts(e: Emitted, t: Table, cte: string): void {
  const ref = tableRef(t);
  const x = e.inserted.get(ref);
  if (x) x.ctes.push(cte);
  else e.inserted.set(ref, { table: t, ctes: [cte] });
}

/**
 * Appends the CTEs creating `row` (its parents first, then itself, then its children) and returns
 * its own. `need`: columns the caller reads from it; `from`: the key filling its foreign key.
 */
function emit(
  e: Emitted,
  row: InsertRowPlan,
  o: { top: boolean; need: string[]; from?: { columns: string[]; values: string[] } },
): string {
  const { sql } = e;
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
    const parent = emit(e, p.row, { top: false, need: p.rel.targetColumns });
    columns.push(...p.rel.localColumns.map(quoteIdent));
    values.push(...p.rel.targetColumns.map((c) => keyOf(p.row.table, parent, c)));
  }
  const a = sql.alias();
  const cte = `${a}_i`;
  const target = tableRef(row.table);
  const change = columns.length
    ? `insert into ${target} as ${a} (${columns.join(', ')}) values (${values.join(', ')})`
    : `insert into ${target} as ${a} default values`;
  // Every record returns what a flat insert's do (the top-level ones make the response's
  // records), so PostgreSQL applies the table's SELECT policies to each as it would there.
  let ret = returning(row.table, a);
  if (!o.top && !row.table.canSelectAll) {
    // Key columns the role may not select: RETURNING them is PostgreSQL's permission error.
    const listed = new Set(selectableColumns(row.table).map((c) => c.sqlName));
    const need = [...o.need, ...row.children.flatMap((c) => c.rel.localColumns)].filter(
      (c) => !listed.has(c),
    );
    for (const c of new Set(need)) ret += `, ${a}.${quoteIdent(c)}`;
  }
  e.ctes.push(`${cte} as (${change} returning ${ret})`);
  inserts(e, row.table, cte);
  for (const c of row.children) {
    const from = {
      columns: c.rel.targetColumns,
      values: c.rel.localColumns.map((k) => keyOf(row.table, cte, k)),
    };
    const leaves = c.rows.filter((r) => !r.parents.length && !r.children.length);
    if (leaves.length > 1) emitLeaves(e, leaves, from);
    for (const child of c.rows)
      if (leaves.length <= 1 || !leaves.includes(child)) emit(e, child, { top: false, need: [], from });
  }
  return cte;
}

/** A scalar subquery reading column `c` of the one row `cte` (inserting into `t`) returned. */
function keyOf(t: Table, cte: string, c: string): string {
  return `(select ${t.canSelectAll ? `(p.__r).${quoteIdent(c)}` : `p.${quoteIdent(c)}`} from ${cte} as p)`;
}

/**
 * Sibling records that no other record reads a key from, in one multi-row insert (nothing needs
 * to tell their rows apart): every column any of them names, DEFAULT where one does not.
 */
function emitLeaves(e: Emitted, rows: InsertRowPlan[], from: { columns: string[]; values: string[] }): void {
  const { sql } = e;
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
  e.ctes.push(
    `${a}_i as (insert into ${tableRef(first.table)} as ${a} (${columns.join(', ')}) values ${values.join(', ')} returning ${returning(first.table, a)})`,
  );
  inserts(e, first.table, `${a}_i`);
}
