/**
 * Strata `nested_mutations`: the `objects` of `insertInto<Type>Collection` whose records create
 * related records too → one InsertRowPlan per record, every foreign key column set exactly once.
 */
import type { Relationship, Table } from '../introspect/model.js';
import { insertInputType } from '../introspect/naming.js';
import {
  insertableColumns,
  NESTED_INSERT_DEPTH_LIMIT,
  NESTED_INSERT_STATEMENT_LIMIT,
  nestedInsertFields,
} from '../introspect/rules.js';
import { fail } from './errors.js';
import type { InsertRowPlan } from './plan-types.js';
import { isPlainObject, valueParam } from './values.js';

/** True when some object names a relationship field (the insert then takes this path). */
export function usesNestedInsert(table: Table, objects: unknown[]): boolean {
  const rels = nestedInsertFields(table);
  return rels.size > 0 && objects.some((o) => isPlainObject(o) && Object.keys(o).some((k) => rels.has(k)));
}

export function nestedInsertRows(table: Table, objects: unknown[]): InsertRowPlan[] {
  const rows = objects.map((o) => rowPlan(table, o, undefined, 0));
  let n = 0;
  for (const r of rows) n += statementsOf(r);
  if (n > NESTED_INSERT_STATEMENT_LIMIT)
    fail(
      `Insert needs ${n} insert statements, more than the limit of ${NESTED_INSERT_STATEMENT_LIMIT}: send its records in smaller batches`,
    );
  return rows;
}

const isLeaf = (r: InsertRowPlan) => !r.parents.length && !r.children.length;

/**
 * The INSERTs the transpiler emits for `row` (transpile/nested-insert.ts): one per record, except
 * that sibling leaf records (two or more) share one.
 */
function statementsOf(row: InsertRowPlan): number {
  let n = 1;
  for (const p of row.parents) n += statementsOf(p.row);
  for (const c of row.children) {
    const leaves = c.rows.filter(isLeaf).length;
    if (leaves > 1) n += 1;
    for (const child of c.rows) if (leaves <= 1 || !isLeaf(child)) n += statementsOf(child);
  }
  return n;
}

/**
 * One record of `table`. `via` is the relationship of the record this one is nested in when that
 * record is created first and its key fills `via.targetColumns` here (to-many, or one-to-one
 * with the key on this side).
 */
function rowPlan(
  table: Table,
  v: unknown,
  via: { rel: Relationship; from: Table } | undefined,
  depth: number,
): InsertRowPlan {
  const typeName = insertInputType(table.typeName);
  if (!isPlainObject(v)) fail(`Invalid input for ${typeName} type`);
  const cols = new Map(insertableColumns(table).map((c) => [c.fieldName, c]));
  const rels = nestedInsertFields(table);
  const extra = Object.keys(v).filter((k) => !cols.has(k) && !rels.has(k));
  if (extra.length) fail(`Input for type ${typeName} contains extra keys ${JSON.stringify(extra)}`);

  // Which input field sets each column (SQL name): a column at most once.
  const setBy = new Map<string, string>();
  const claim = (columns: string[], by: string) => {
    for (const c of columns) {
      const first = setBy.get(c);
      if (first !== undefined)
        fail(`Input for type ${typeName} sets column "${c}" through both "${first}" and "${by}"`);
      setBy.set(c, by);
    }
  };
  if (via) claim(via.rel.targetColumns, via.rel.fieldName);
  const row: InsertRowPlan = { table, values: [], parents: [], children: [] };
  for (const [name, column] of cols) {
    if (v[name] === undefined) continue;
    claim([column.sqlName], name);
    row.values.push({ column, value: valueParam(column.type, v[name]) });
  }
  for (const [name, rel] of rels) {
    const x = v[name];
    if (x === undefined || x === null) continue;
    if (depth >= NESTED_INSERT_DEPTH_LIMIT)
      fail(`Insert nests relationships deeper than the limit of ${NESTED_INSERT_DEPTH_LIMIT}`);
    if (rel.referencing) {
      // Back to the record this one is nested in: it would be created twice, each needing the other.
      if (via && rel.target === via.from && sameColumns(rel.localColumns, via.rel.targetColumns))
        fail(
          `Input for type ${typeName} contains a cycle: "${name}" leads back to the record it is nested in through "${via.rel.fieldName}"`,
        );
      claim(rel.localColumns, name);
      row.parents.push({ rel, row: rowPlan(rel.target, x, undefined, depth + 1) });
    } else {
      const list = rel.kind === 'toMany' && Array.isArray(x) ? x : [x];
      const from = { rel, from: table };
      row.children.push({ rel, rows: list.map((o) => rowPlan(rel.target, o, from, depth + 1)) });
    }
  }
  return row;
}

function sameColumns(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((c) => b.includes(c));
}
