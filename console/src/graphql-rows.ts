/**
 * A table's rows read through the project's GraphQL API (pg_graphql-compatible) as a chosen role:
 * the anon key's JWT, or a signed-in user's (the Management API signs it), so row level security
 * decides what comes back. Names are the table's and columns' own (no inflection); the arguments
 * are written as GraphQL literals typed from the columns' PostgreSQL types.
 */
import { ApiError, messageOf, projectBase } from './api';
import type { Filter } from './table-rows-sql';

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

export interface RoleRowsQuery {
  table: string;
  columns: { name: string; type: string }[];
  filter?: Filter;
  sort?: { column: string; desc: boolean };
  first: number;
  offset: number;
}

const NUMERIC = /^(smallint|integer|real|double precision)$/;

/** A GraphQL literal for `text` as a value of a column of PostgreSQL type `type`. */
function literal(text: string, type: string): string {
  if (NUMERIC.test(type)) {
    if (!/^-?\d+(\.\d+)?(e-?\d+)?$/i.test(text.trim())) throw new Error(`"${text}" is not a number`);
    return text.trim();
  }
  if (type === 'boolean') {
    if (!/^(true|false)$/i.test(text.trim())) throw new Error(`"${text}" is not true or false`);
    return text.trim().toLowerCase();
  }
  return JSON.stringify(text);
}

const OPS: Record<string, string> = {
  '=': 'eq',
  '<>': 'neq',
  '<': 'lt',
  '>': 'gt',
  '<=': 'lte',
  '>=': 'gte',
};

export function roleRowsQuery(q: RoleRowsQuery): string {
  const names = q.columns.map((c) => c.name);
  const bad = [q.table, ...names].find((n) => !NAME.test(n));
  if (bad) throw new Error(`"${bad}" is not a GraphQL name, so this table cannot be read through GraphQL`);
  const args = [`first: ${q.first}`, `offset: ${q.offset}`];
  if (q.sort)
    args.push(`orderBy: [{ ${q.sort.column}: ${q.sort.desc ? 'DescNullsLast' : 'AscNullsFirst'} }]`);
  const f = q.filter;
  if (f) {
    const type = q.columns.find((c) => c.name === f.column)?.type ?? 'text';
    const cond =
      f.op === 'is null'
        ? 'is: NULL'
        : f.op === 'is not null'
          ? 'is: NOT_NULL'
          : f.op === 'contains'
            ? `ilike: ${JSON.stringify(`%${f.value}%`)}`
            : `${OPS[f.op]}: ${literal(f.value, type)}`;
    args.push(`filter: { ${f.column}: { ${cond} } }`);
  }
  return `{ rows: ${q.table}Collection(${args.join(', ')}) { edges { node { ${names.join(' ')} } } pageInfo { hasNextPage } } }`;
}

export async function fetchRoleRows(
  ref: string,
  apikey: string,
  jwt: string,
  query: string,
): Promise<{ rows: Record<string, unknown>[]; more: boolean }> {
  const res = await fetch(`${projectBase(ref)}/graphql/v1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', apikey, authorization: `Bearer ${jwt}` },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json().catch(() => undefined)) as
    | {
        data?: {
          rows?: { edges: { node: Record<string, unknown> }[]; pageInfo: { hasNextPage: boolean } } | null;
        };
        errors?: { message: string }[];
      }
    | undefined;
  if (!res.ok && !body?.errors) throw new ApiError(res.status, messageOf(body, res.status));
  const first = body?.errors?.[0]?.message;
  if (first) throw new Error(`GraphQL: ${first}`);
  const rows = body?.data?.rows;
  if (!rows) throw new Error('GraphQL: this role cannot see the table (no collection answered)');
  return { rows: rows.edges.map((e) => e.node), more: rows.pageInfo.hasNextPage };
}
