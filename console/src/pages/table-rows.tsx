/**
 * A table's rows in the data grid: sorted, filtered and paged by the server (SQL through
 * database/query, identifiers quoted, values bound as parameters); cells edited inline (Enter or
 * double-click, Enter saves), rows inserted and deleted (after confirmation), all as the project
 * owner. Headers show PostgreSQL type names; a foreign key's value opens the row it references.
 */
import { useCallback, useMemo, useState } from 'react';
import { type ApiKeys, management, quoteIdent, runSqlWith } from '../api';
import { DataGrid, type GridColumn, type Row, type Sort } from '../data-grid';
import { attempt, ErrorText, Field } from '../form';
import {
  fetchRoleRows,
  roleDelete,
  roleInsert,
  roleRowsQuery,
  roleUpdate,
  runRoleMutation,
} from '../graphql-rows';
import {
  countRows,
  deleteRow,
  FILTER_OPS,
  type Filter,
  type FilterOp,
  insertRow,
  selectRows,
  type Statement,
  updateCell,
} from '../table-rows-sql';
import { useLoad } from '../use-load';

const PAGE = 100;

/** Who reads the rows: the owner (SQL), or anon / a signed-in user through GraphQL (RLS applies). */
type ReadAs = 'owner' | 'anon' | 'authenticated';

interface ColumnInfo {
  name: string;
  type: string;
  pk: boolean;
  fk: { schema: string; table: string; column: string } | null;
}

const COLUMNS_SQL = `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
  coalesce(a.attnum = any(pk.conkey), false) as pk,
  (select json_build_object('schema', fn.nspname, 'table', fc.relname, 'column', fa.attname)
     from pg_constraint f join pg_class fc on fc.oid = f.confrelid join pg_namespace fn on fn.oid = fc.relnamespace
     join pg_attribute fa on fa.attrelid = f.confrelid and fa.attnum = f.confkey[1]
    where f.conrelid = a.attrelid and f.contype = 'f' and f.conkey = array[a.attnum] limit 1) as fk
  from pg_attribute a left join pg_constraint pk on pk.conrelid = a.attrelid and pk.contype = 'p'
 where a.attrelid = $1::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum`;

export type OpenTable = (schema: string, table: string, filter?: Filter) => void;

export function TableRows({
  projectRef,
  schema,
  table,
  initialFilter,
  onOpen,
  keys,
}: {
  keys?: ApiKeys;
  projectRef: string;
  schema: string;
  table: string;
  initialFilter?: Filter;
  onOpen: OpenTable;
}) {
  const run = useCallback(
    (s: Statement, readOnly = false) => runSqlWith(projectRef, s.text, s.values, readOnly),
    [projectRef],
  );
  const info = useLoad(
    () =>
      runSqlWith(
        projectRef,
        COLUMNS_SQL,
        [`${quoteIdent(schema)}.${quoteIdent(table)}`],
        true,
      ) as Promise<unknown> as Promise<ColumnInfo[]>,
    [projectRef, schema, table],
  );
  const [sort, setSort] = useState<Sort>();
  const [filter, setFilter] = useState<Filter | undefined>(initialFilter);
  const [page, setPage] = useState(0);
  const [readAs, setReadAs] = useState<ReadAs>('owner');
  const [userId, setUserId] = useState('00000000-0000-4000-8000-000000000001');
  /** The chosen role's JWT: the anon key, or one the Management API signs for the user id. */
  const roleJwt = async (): Promise<{ apikey: string; jwt: string }> => {
    if (!keys)
      throw new Error("Reading as a role needs the project's API keys, which your role may not read");
    const jwt =
      readAs === 'anon'
        ? keys.anon
        : (
            await management<{ token: string }>('POST', `/projects/${projectRef}/console/role-token`, {
              role: 'authenticated',
              sub: userId,
            })
          ).token;
    return { apikey: keys.anon, jwt };
  };
  const asRole = async (): Promise<{ rows: Row[]; more: boolean }> => {
    const { apikey, jwt } = await roleJwt();
    const query = roleRowsQuery({
      table,
      columns: info.data ?? [],
      filter,
      sort,
      first: PAGE,
      offset: page * PAGE,
    });
    return fetchRoleRows(projectRef, apikey, jwt, query);
  };
  const rowsAs = useLoad(
    () =>
      readAs === 'owner'
        ? run(selectRows(schema, table, { filter, sort, limit: PAGE, offset: page * PAGE }), true).then(
            (r) => ({ rows: r, more: false }),
          )
        : info.data
          ? asRole()
          : Promise.resolve(undefined),
    [run, schema, table, filter, sort, page, readAs, userId, info.data],
  );
  const rows = { ...rowsAs, data: rowsAs.data?.rows };
  const count = useLoad(
    () =>
      readAs === 'owner'
        ? run(countRows(schema, table, filter), true).then((r) => Number(r[0]?.n ?? 0))
        : Promise.resolve(undefined),
    [run, schema, table, filter, readAs],
  );
  const [activeRow, setActiveRow] = useState<Row>();
  const [error, setError] = useState<string>();
  const pkeys = useMemo(() => info.data?.filter((c) => c.pk).map((c) => c.name) ?? [], [info.data]);
  const columns = useMemo<GridColumn[]>(
    () =>
      info.data?.map((c) => ({
        name: c.name,
        type: c.type,
        ...(c.fk
          ? {
              follow: (value: unknown) =>
                c.fk &&
                onOpen(c.fk.schema, c.fk.table, { column: c.fk.column, op: '=', value: String(value) }),
              followLabel: `Open ${c.fk.table} row`,
            }
          : {}),
      })) ?? [],
    [info.data, onOpen],
  );
  const editable = pkeys.length > 0;
  const asRoleWrite = async (mutation: (w: { table: string; columns: ColumnInfo[] }) => string) => {
    const { apikey, jwt } = await roleJwt();
    await runRoleMutation(projectRef, apikey, jwt, mutation({ table, columns: info.data ?? [] }));
  };
  const reload = () => {
    rows.reload();
    count.reload();
  };
  const onEdit = async (row: Row, column: string, text: string | null) => {
    if (readAs === 'owner') await run(updateCell(schema, table, pkeys, row, column, text));
    else await asRoleWrite((w) => roleUpdate(w, pkeys, row, column, text));
    rows.reload();
  };
  const remove = () => {
    if (!activeRow || !confirm(`Delete this row of ${schema}.${table}? This cannot be undone.`)) return;
    void attempt(async () => {
      if (readAs === 'owner') await run(deleteRow(schema, table, pkeys, activeRow));
      else await asRoleWrite((w) => roleDelete(w, pkeys, activeRow));
      reload();
    }, setError);
  };
  const total = count.data;
  const shown = rows.data?.length ?? 0;
  return (
    <section className="table-rows" aria-label={`Rows of ${schema}.${table}`}>
      <FilterBar
        columns={info.data?.map((c) => c.name) ?? []}
        filter={filter}
        onApply={(f) => {
          setPage(0);
          setFilter(f);
        }}
      />
      <form className="inline wrap read-as" aria-label="Read rows as" onSubmit={(e) => e.preventDefault()}>
        <Field label="Read as">
          <select
            name="read-as"
            value={readAs}
            onChange={(e) => {
              setPage(0);
              setReadAs(e.target.value as ReadAs);
            }}
          >
            <option value="owner">project owner (SQL)</option>
            <option value="anon">anon (GraphQL)</option>
            <option value="authenticated">authenticated user (GraphQL)</option>
          </select>
        </Field>
        {readAs === 'authenticated' && (
          <Field label="User id">
            <input name="read-as-user" value={userId} onChange={(e) => setUserId(e.target.value)} />
          </Field>
        )}
      </form>
      <p className="muted">
        {readAs !== 'owner'
          ? `Rows as ${readAs === 'anon' ? 'anon' : 'this user'} sees them through the GraphQL API, and changes are made as ${readAs === 'anon' ? 'anon' : 'this user'} too: row level security and grants apply.`
          : editable
            ? 'Rows are read and changed as the project owner (row level security does not apply to the owner). Enter or double-click edits a cell; Ctrl+Delete in a cell sets it to NULL.'
            : 'This table has no primary key, so its rows are shown read-only.'}
      </p>
      <ErrorText error={info.error ?? rows.error ?? count.error ?? error} />
      {rows.data && shown === 0 ? (
        <p className="empty">
          {readAs !== 'owner'
            ? 'This role sees no rows here (row level security or its grants hide them). Read as the project owner to see every row.'
            : filter
              ? 'No rows match this filter. Clear it to see every row.'
              : 'No rows yet. Insert one below.'}
        </p>
      ) : (
        rows.data &&
        columns.length > 0 && (
          <DataGrid
            label={`${schema}.${table}`}
            rows={rows.data}
            columns={columns}
            sort={sort}
            onSort={(s) => {
              setPage(0);
              setSort(s);
            }}
            onEdit={editable ? onEdit : undefined}
            onActiveRow={setActiveRow}
            height={380}
          />
        )
      )}
      <p className="pager">
        <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span>
          {shown === 0
            ? page === 0
              ? 'No rows'
              : 'No more rows'
            : `Rows ${page * PAGE + 1}–${page * PAGE + shown}${total !== undefined ? ` of ${total}` : ''}`}
        </span>
        <button
          type="button"
          disabled={
            readAs === 'owner' ? total === undefined || (page + 1) * PAGE >= total : !rowsAs.data?.more
          }
          onClick={() => setPage(page + 1)}
        >
          Next
        </button>
        {editable && (
          <button type="button" className="danger" disabled={!activeRow} onClick={remove}>
            Delete selected row
          </button>
        )}
      </p>
      {editable && info.data && (
        <InsertRow
          columns={info.data}
          onInsert={async (given) => {
            if (readAs === 'owner') await run(insertRow(schema, table, given));
            else await asRoleWrite((w) => roleInsert(w, given));
            reload();
          }}
        />
      )}
    </section>
  );
}

function FilterBar({
  columns,
  filter,
  onApply,
}: {
  columns: string[];
  filter?: Filter;
  onApply: (f: Filter | undefined) => void;
}) {
  const [column, setColumn] = useState(filter?.column ?? columns[0] ?? '');
  const [op, setOp] = useState<FilterOp>(filter?.op ?? '=');
  const [value, setValue] = useState(filter?.value ?? '');
  const col = column || columns[0] || '';
  return (
    <form
      className="inline wrap filter-bar"
      aria-label="Filter rows"
      onSubmit={(e) => {
        e.preventDefault();
        if (col) onApply({ column: col, op, value });
      }}
    >
      <Field label="Column">
        <select name="filter-column" value={col} onChange={(e) => setColumn(e.target.value)}>
          {columns.map((c) => (
            <option key={c}>{c}</option>
          ))}
        </select>
      </Field>
      <Field label="Operator">
        <select name="filter-op" value={op} onChange={(e) => setOp(e.target.value as FilterOp)}>
          {FILTER_OPS.map((o) => (
            <option key={o}>{o}</option>
          ))}
        </select>
      </Field>
      {op !== 'is null' && op !== 'is not null' && (
        <Field label="Value">
          <input name="filter-value" value={value} onChange={(e) => setValue(e.target.value)} />
        </Field>
      )}
      <button type="submit">Filter</button>
      {filter && (
        <button type="button" onClick={() => onApply(undefined)}>
          Clear filter
        </button>
      )}
    </form>
  );
}

function InsertRow({
  columns,
  onInsert,
}: {
  columns: ColumnInfo[];
  onInsert: (given: Record<string, string>) => Promise<void>;
}) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const given = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));
    void attempt(async () => {
      await onInsert(given);
      setValues({});
    }, setError);
  };
  return (
    <details className="card insert-row">
      <summary>Insert a row</summary>
      <form className="grid-form" onSubmit={submit}>
        {columns.map((c) => (
          <Field key={c.name} label={`${c.name} (${c.type})`}>
            <input
              name={`insert-${c.name}`}
              placeholder="default"
              value={values[c.name] ?? ''}
              onChange={(e) => setValues({ ...values, [c.name]: e.target.value })}
            />
          </Field>
        ))}
        <ErrorText error={error} />
        <button type="submit">Insert row</button>
      </form>
    </details>
  );
}
