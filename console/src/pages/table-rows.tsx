/**
 * A table's rows in the data grid: sorted, filtered and paged by the server (SQL through
 * database/query, identifiers quoted, values bound as parameters); cells edited inline (Enter or
 * double-click, Enter saves), rows inserted and deleted (after confirmation), all as the project
 * owner. Headers show PostgreSQL type names; a foreign key's value opens the row it references.
 */
import { useCallback, useMemo, useState } from 'react';
import { quoteIdent, runSqlWith } from '../api';
import { DataGrid, type GridColumn, type Row, type Sort } from '../data-grid';
import { attempt, ErrorText, Field } from '../form';
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
}: {
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
  const rows = useLoad(
    () => run(selectRows(schema, table, { filter, sort, limit: PAGE, offset: page * PAGE }), true),
    [run, schema, table, filter, sort, page],
  );
  const count = useLoad(
    () => run(countRows(schema, table, filter), true).then((r) => Number(r[0]?.n ?? 0)),
    [run, schema, table, filter],
  );
  const [activeRow, setActiveRow] = useState<Row>();
  const [error, setError] = useState<string>();
  const keys = useMemo(() => info.data?.filter((c) => c.pk).map((c) => c.name) ?? [], [info.data]);
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
  const editable = keys.length > 0;
  const reload = () => {
    rows.reload();
    count.reload();
  };
  const onEdit = async (row: Row, column: string, text: string | null) => {
    await run(updateCell(schema, table, keys, row, column, text));
    rows.reload();
  };
  const remove = () => {
    if (!activeRow || !confirm(`Delete this row of ${schema}.${table}? This cannot be undone.`)) return;
    void attempt(async () => {
      await run(deleteRow(schema, table, keys, activeRow));
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
      <p className="muted">
        {editable
          ? 'Rows are read and changed as the project owner (row level security does not apply to the owner). Enter or double-click edits a cell; Ctrl+Delete in a cell sets it to NULL.'
          : 'This table has no primary key, so its rows are shown read-only.'}
      </p>
      <ErrorText error={info.error ?? rows.error ?? count.error ?? error} />
      {rows.data && shown === 0 ? (
        <p className="empty">
          {filter
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
          disabled={total === undefined || (page + 1) * PAGE >= total}
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
            await run(insertRow(schema, table, given));
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
