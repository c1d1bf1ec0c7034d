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

export interface RoleWrite {
  table: string;
  columns: { name: string; type: string }[];
}

function checkNames(table: string, names: string[]): void {
  const bad = [table, ...names].find((n) => !NAME.test(n));
  if (bad) throw new Error(`"${bad}" is not a GraphQL name, so this table cannot be written through GraphQL`);
}

const typeOf = (w: RoleWrite, column: string) => w.columns.find((c) => c.name === column)?.type ?? 'text';

/** `{ a: { eq: 1 }, b: { eq: "x" } }` naming one row by its primary key. */
function keyFilter(w: RoleWrite, pkeys: string[], row: Record<string, unknown>): string {
  checkNames(w.table, pkeys);
  const parts = pkeys.map((k) => {
    const v = row[k];
    if (v === null || v === undefined) throw new Error(`The row has no value for its key ${k}`);
    return `${k}: { eq: ${literal(String(v), typeOf(w, k))} }`;
  });
  return `{ ${parts.join(', ')} }`;
}

/** The mutations the table editor sends as a role: RLS and grants decide what they change. */
export function roleInsert(w: RoleWrite, given: Record<string, string>): string {
  const names = Object.keys(given);
  checkNames(w.table, names);
  const fields = names.map((n) => `${n}: ${literal(given[n] ?? '', typeOf(w, n))}`).join(', ');
  return `mutation { r: insertInto${w.table}Collection(objects: [{ ${fields} }]) { affectedCount } }`;
}

export function roleUpdate(
  w: RoleWrite,
  pkeys: string[],
  row: Record<string, unknown>,
  column: string,
  text: string | null,
): string {
  checkNames(w.table, [column]);
  const value = text === null ? 'null' : literal(text, typeOf(w, column));
  return `mutation { r: update${w.table}Collection(set: { ${column}: ${value} }, filter: ${keyFilter(w, pkeys, row)}, atMost: 1) { affectedCount } }`;
}

export function roleDelete(w: RoleWrite, pkeys: string[], row: Record<string, unknown>): string {
  return `mutation { r: deleteFrom${w.table}Collection(filter: ${keyFilter(w, pkeys, row)}, atMost: 1) { affectedCount } }`;
}

/** Sends a mutation as the role; a change that touched no row is an error that says why it may be. */
export async function runRoleMutation(
  ref: string,
  apikey: string,
  jwt: string,
  mutation: string,
): Promise<void> {
  const res = await fetch(`${projectBase(ref)}/graphql/v1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', apikey, authorization: `Bearer ${jwt}` },
    body: JSON.stringify({ query: mutation }),
  });
  const body = (await res.json().catch(() => undefined)) as
    | { data?: { r?: { affectedCount: number } | null }; errors?: { message: string }[] }
    | undefined;
  if (!res.ok && !body?.errors) throw new ApiError(res.status, messageOf(body, res.status));
  const first = body?.errors?.[0]?.message;
  if (first) throw new Error(`GraphQL: ${first}`);
  if (!body?.data?.r?.affectedCount)
    throw new Error('No row changed: row level security or the grants of this role did not allow it');
}
