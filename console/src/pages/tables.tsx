/**
 * Table editor (read): schemas → tables and views with columns, types, keys, RLS and policies;
 * rows with pagination. Catalog reads go through the Management API's read-only query endpoint.
 */
import { useState } from 'react';
import { quoteIdent, quoteLiteral, runSql } from '../api';
import { DataTable } from '../data-table';
import { ErrorText } from '../form';
import { useLoad } from '../use-load';
import type { ProjectProps } from './project-shell';

const PAGE = 50;
const SCHEMAS_SQL = `select nspname as name from pg_namespace
 where nspname not like 'pg\\_%' and nspname <> 'information_schema' order by nspname`;

interface Relation {
  name: string;
  kind: string;
  rls: boolean;
}

const relationsSql = (schema: string) => `select c.relname as name,
  case c.relkind when 'r' then 'table' when 'p' then 'table' when 'v' then 'view' when 'm' then 'materialized view' else 'foreign table' end as kind,
  c.relrowsecurity as rls
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
 where n.nspname = ${quoteLiteral(schema)} and c.relkind in ('r','p','v','m','f') order by c.relname`;

const columnsSql = (
  schema: string,
  table: string,
) => `select a.attname as column, format_type(a.atttypid, a.atttypmod) as type,
  not a.attnotnull as nullable, pg_get_expr(d.adbin, d.adrelid) as default,
  coalesce((select string_agg(case con.contype when 'p' then 'primary key' when 'u' then 'unique' when 'f' then 'references ' || con.confrelid::regclass::text end, ', ')
     from pg_constraint con where con.conrelid = a.attrelid and a.attnum = any(con.conkey) and con.contype in ('p','u','f')), '') as keys
  from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
 where a.attrelid = ${quoteLiteral(`${quoteIdent(schema)}.${quoteIdent(table)}`)}::regclass and a.attnum > 0 and not a.attisdropped
 order by a.attnum`;

const policiesSql = (
  schema: string,
  table: string,
) => `select policyname as policy, cmd as command, roles::text as roles,
  qual as using, with_check from pg_policies where schemaname = ${quoteLiteral(schema)} and tablename = ${quoteLiteral(table)} order by policyname`;

export function TablesPage({ project }: ProjectProps) {
  const ref = project.ref;
  const [schema, setSchema] = useState('public');
  const [table, setTable] = useState<string>();
  const schemas = useLoad(() => runSql(ref, SCHEMAS_SQL, true), [ref]);
  const relations = useLoad(
    () => runSql(ref, relationsSql(schema), true) as Promise<unknown> as Promise<Relation[]>,
    [ref, schema],
  );
  return (
    <>
      <h1>Table editor</h1>
      <ErrorText error={schemas.error ?? relations.error} />
      <div className="split">
        <div className="list">
          <select
            aria-label="Schema"
            value={schema}
            onChange={(e) => {
              setSchema(e.target.value);
              setTable(undefined);
            }}
          >
            {schemas.data?.map((s) => (
              <option key={String(s.name)}>{String(s.name)}</option>
            ))}
          </select>
          <ul>
            {relations.data?.map((r) => (
              <li key={r.name}>
                <button
                  type="button"
                  className={r.name === table ? 'link active' : 'link'}
                  onClick={() => setTable(r.name)}
                >
                  {r.name}
                </button>{' '}
                <span className="muted">
                  {r.kind}
                  {r.kind === 'table' ? (r.rls ? ' · RLS on' : ' · RLS off') : ''}
                </span>
              </li>
            ))}
            {relations.data?.length === 0 && <li className="muted">No tables in {schema}.</li>}
          </ul>
        </div>
        <div className="detail">
          {table && <TableDetail key={`${schema}.${table}`} projectRef={ref} schema={schema} table={table} />}
        </div>
      </div>
    </>
  );
}

function TableDetail({ projectRef, schema, table }: { projectRef: string; schema: string; table: string }) {
  const [page, setPage] = useState(0);
  const columns = useLoad(
    () => runSql(projectRef, columnsSql(schema, table), true),
    [projectRef, schema, table],
  );
  const policies = useLoad(
    () => runSql(projectRef, policiesSql(schema, table), true),
    [projectRef, schema, table],
  );
  const rows = useLoad(
    () =>
      runSql(
        projectRef,
        `select * from ${quoteIdent(schema)}.${quoteIdent(table)} limit ${PAGE + 1} offset ${page * PAGE}`,
        true,
      ),
    [projectRef, schema, table, page],
  );
  const shown = rows.data?.slice(0, PAGE) ?? [];
  return (
    <>
      <h2>
        {schema}.{table}
      </h2>
      <h3>Columns</h3>
      <ErrorText error={columns.error} />
      {columns.data && <DataTable rows={columns.data} />}
      <h3>Policies</h3>
      <ErrorText error={policies.error} />
      {policies.data && <DataTable rows={policies.data} />}
      <h3>Rows</h3>
      <ErrorText error={rows.error} />
      {rows.data && <DataTable rows={shown} columns={columns.data?.map((c) => String(c.column))} />}
      <p className="pager">
        <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span>
          Rows {page * PAGE + 1}–{page * PAGE + shown.length}
        </span>
        <button type="button" disabled={(rows.data?.length ?? 0) <= PAGE} onClick={() => setPage(page + 1)}>
          Next
        </button>
      </p>
    </>
  );
}
