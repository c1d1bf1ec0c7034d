/**
 * The table editor's row statements: identifiers quoted, every value bound as a parameter
 * ($1, $2, …), run through database/query as the project owner.
 */
import { quoteIdent } from './api';

export type FilterOp = '=' | '<>' | '<' | '>' | '<=' | '>=' | 'contains' | 'is null' | 'is not null';
export const FILTER_OPS: FilterOp[] = ['=', '<>', '<', '>', '<=', '>=', 'contains', 'is null', 'is not null'];

export interface Filter {
  column: string;
  op: FilterOp;
  value: string;
}

export interface Statement {
  text: string;
  values: unknown[];
}

const rel = (schema: string, table: string) => `${quoteIdent(schema)}.${quoteIdent(table)}`;

function whereOf(filter: Filter | undefined, values: unknown[]): string {
  if (!filter) return '';
  const col = quoteIdent(filter.column);
  if (filter.op === 'is null' || filter.op === 'is not null') return ` where ${col} ${filter.op}`;
  values.push(filter.value);
  if (filter.op === 'contains') return ` where ${col}::text ilike '%' || $${values.length} || '%'`;
  return ` where ${col} ${filter.op} $${values.length}`;
}

export function selectRows(
  schema: string,
  table: string,
  opts: { filter?: Filter; sort?: { column: string; desc: boolean }; limit: number; offset: number },
): Statement {
  const values: unknown[] = [];
  const where = whereOf(opts.filter, values);
  const order = opts.sort
    ? ` order by ${quoteIdent(opts.sort.column)} ${opts.sort.desc ? 'desc' : 'asc'}`
    : '';
  values.push(opts.limit, opts.offset);
  return {
    text: `select * from ${rel(schema, table)}${where}${order} limit $${values.length - 1} offset $${values.length}`,
    values,
  };
}

export function countRows(schema: string, table: string, filter?: Filter): Statement {
  const values: unknown[] = [];
  const where = whereOf(filter, values);
  return { text: `select count(*)::bigint as n from ${rel(schema, table)}${where}`, values };
}

/** `where pk1 = $n and pk2 = $m`, for the row's primary-key values. */
function matchKey(keys: string[], row: Record<string, unknown>, values: unknown[]): string {
  return keys
    .map((k) => {
      values.push(row[k]);
      return `${quoteIdent(k)} = $${values.length}`;
    })
    .join(' and ');
}

export function updateCell(
  schema: string,
  table: string,
  keys: string[],
  row: Record<string, unknown>,
  column: string,
  value: string | null,
): Statement {
  const values: unknown[] = [value];
  const where = matchKey(keys, row, values);
  return {
    text: `update ${rel(schema, table)} set ${quoteIdent(column)} = $1 where ${where} returning *`,
    values,
  };
}

export function deleteRow(
  schema: string,
  table: string,
  keys: string[],
  row: Record<string, unknown>,
): Statement {
  const values: unknown[] = [];
  const where = matchKey(keys, row, values);
  return { text: `delete from ${rel(schema, table)} where ${where} returning *`, values };
}

/** An insert of the given columns (the others take their defaults). */
export function insertRow(schema: string, table: string, given: Record<string, string>): Statement {
  const cols = Object.keys(given);
  if (cols.length === 0)
    return { text: `insert into ${rel(schema, table)} default values returning *`, values: [] };
  return {
    text: `insert into ${rel(schema, table)} (${cols.map(quoteIdent).join(', ')}) values (${cols
      .map((_, i) => `$${i + 1}`)
      .join(', ')}) returning *`,
    values: cols.map((c) => given[c]),
  };
}
