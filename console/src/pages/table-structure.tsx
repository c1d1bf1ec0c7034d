/**
 * The table editor's structure forms, run as the project owner (database/query): a new table
 * (columns with types, defaults, primary and foreign keys; RLS on by default), a column added or
 * dropped, row level security turned on or off, a policy created or dropped. Each form shows the
 * statement it will run; destructive ones ask first.
 */
import { useState } from 'react';
import { runSql } from '../api';
import { attempt, ErrorText, Field } from '../form';
import {
  addColumnSql,
  alterColumnSql,
  type ColumnChange,
  COMMON_TYPES,
  createPolicySql,
  createTableSql,
  dropColumnSql,
  dropPolicySql,
  type NewColumn,
  type NewPolicy,
  rlsSql,
} from '../table-ddl';

const blankColumn = (): NewColumn => ({
  name: '',
  type: 'text',
  default: '',
  nullable: true,
  primaryKey: false,
  references: '',
});

/** The statement a form would run, or the reason it cannot be built yet. */
function preview(build: () => string): { sql?: string; problem?: string } {
  try {
    return { sql: build() };
  } catch (err) {
    return { problem: err instanceof Error ? err.message : String(err) };
  }
}

function ColumnFields({
  value,
  onChange,
  label,
}: {
  value: NewColumn;
  onChange: (c: NewColumn) => void;
  label: string;
}) {
  const set = (patch: Partial<NewColumn>) => onChange({ ...value, ...patch });
  return (
    <fieldset className="column-fields">
      <legend>{label}</legend>
      <Field label="Name">
        <input className="full-width" value={value.name} onChange={(e) => set({ name: e.target.value })} />
      </Field>
      <Field label="Type">
        <input
          className="full-width"
          list="pg-types"
          value={value.type}
          onChange={(e) => set({ type: e.target.value })}
        />
      </Field>
      <Field label="Default">
        <input
          className="full-width"
          value={value.default}
          placeholder="none, identity, now(), …"
          onChange={(e) => set({ default: e.target.value })}
        />
      </Field>
      <Field label="References">
        <input
          className="full-width"
          value={value.references}
          placeholder="table(column)"
          onChange={(e) => set({ references: e.target.value })}
        />
      </Field>
      <label className="check">
        <input
          type="checkbox"
          checked={value.primaryKey}
          onChange={(e) => set({ primaryKey: e.target.checked })}
        />{' '}
        Primary key
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={value.nullable}
          onChange={(e) => set({ nullable: e.target.checked })}
        />{' '}
        Nullable
      </label>
    </fieldset>
  );
}

export function TypeList() {
  return (
    <datalist id="pg-types">
      {COMMON_TYPES.map((t) => (
        <option key={t} value={t} />
      ))}
    </datalist>
  );
}

export function NewTableForm({
  projectRef,
  schema,
  onCreated,
}: {
  projectRef: string;
  schema: string;
  onCreated: (table: string) => void;
}) {
  const [name, setName] = useState('');
  const [rls, setRls] = useState(true);
  const [columns, setColumns] = useState<NewColumn[]>([
    { ...blankColumn(), name: 'id', type: 'bigint', default: 'identity', primaryKey: true, nullable: false },
    { ...blankColumn(), name: 'created_at', type: 'timestamptz', default: 'now()', nullable: false },
  ]);
  const [error, setError] = useState<string>();
  const built = preview(() => createTableSql(schema, name, columns, rls));
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    void attempt(async () => {
      if (!built.sql) throw new Error(built.problem);
      await runSql(projectRef, built.sql);
      onCreated(name.trim());
    }, setError);
  };
  return (
    <form className="card structure" aria-label="New table" onSubmit={submit}>
      <TypeList />
      <Field label="Table name">
        <input value={name} onChange={(e) => setName(e.target.value)} required />
      </Field>
      {columns.map((c, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the form's rows are positions
        <div key={i} className="column-row">
          <ColumnFields
            label={`Column ${i + 1}`}
            value={c}
            onChange={(next) => setColumns(columns.map((x, j) => (j === i ? next : x)))}
          />
          <button
            type="button"
            className="link danger-link"
            onClick={() => setColumns(columns.filter((_, j) => j !== i))}
          >
            Remove column {i + 1}
          </button>
        </div>
      ))}
      <p>
        <button type="button" onClick={() => setColumns([...columns, blankColumn()])}>
          Add a column
        </button>
      </p>
      <label className="check">
        <input type="checkbox" checked={rls} onChange={(e) => setRls(e.target.checked)} /> Row level security
        on (recommended: no role but the owner and service_role sees rows until a policy allows it)
      </label>
      <details>
        <summary>SQL</summary>
        <pre className="mono full-width">{built.sql ?? built.problem}</pre>
      </details>
      <button type="submit" className="primary">
        Create table
      </button>
      <ErrorText error={error} />
    </form>
  );
}

export function StructureActions({
  projectRef,
  schema,
  table,
  rls,
  columns,
  policies,
  onChanged,
}: {
  projectRef: string;
  schema: string;
  table: string;
  rls?: boolean;
  columns: string[];
  policies: string[];
  onChanged: () => void;
}) {
  const [column, setColumn] = useState<NewColumn>(blankColumn());
  const [drop, setDrop] = useState('');
  const [error, setError] = useState<string>();
  const run = (sql: string, ask?: string) => {
    if (ask && !confirm(ask)) return;
    void attempt(async () => {
      await runSql(projectRef, sql);
      onChanged();
    }, setError);
  };
  const adding = preview(() => addColumnSql(schema, table, column));
  return (
    <details className="card structure">
      <summary>Change the table</summary>
      <TypeList />
      <p className="inline wrap">
        Row level security is <strong>{rls ? 'on' : 'off'}</strong>.{' '}
        <button
          type="button"
          onClick={() =>
            run(
              rlsSql(schema, table, !rls),
              rls
                ? `Turn row level security off for ${schema}.${table}? Every role with a grant then sees every row.`
                : undefined,
            )
          }
        >
          {rls ? 'Turn RLS off' : 'Turn RLS on'}
        </button>
      </p>
      <form
        aria-label="Add a column"
        onSubmit={(e) => {
          e.preventDefault();
          if (!adding.sql) return setError(adding.problem);
          run(adding.sql);
          setColumn(blankColumn());
        }}
      >
        <ColumnFields label="New column" value={column} onChange={setColumn} />
        <button type="submit">Add column</button>
      </form>
      <ChangeColumn
        columns={columns}
        onSubmit={(sql) => run(sql)}
        build={(c) => preview(() => alterColumnSql(schema, table, c))}
      />
      <form
        className="inline wrap"
        aria-label="Drop a column"
        onSubmit={(e) => {
          e.preventDefault();
          if (drop)
            run(
              dropColumnSql(schema, table, drop),
              `Drop the column ${drop} of ${schema}.${table} and all its values?`,
            );
        }}
      >
        <Field label="Column to drop">
          <select value={drop} onChange={(e) => setDrop(e.target.value)}>
            <option value="">choose…</option>
            {columns.map((c) => (
              <option key={c}>{c}</option>
            ))}
          </select>
        </Field>
        <button type="submit" className="danger" disabled={!drop}>
          Drop column
        </button>
      </form>
      <PolicyForm
        onSubmit={(p) => run(createPolicySql(schema, table, p))}
        build={(p) => preview(() => createPolicySql(schema, table, p))}
      />
      {policies.length > 0 && (
        <p className="inline wrap">
          {policies.map((p) => (
            <button
              key={p}
              type="button"
              className="danger"
              onClick={() =>
                run(dropPolicySql(schema, table, p), `Drop the policy "${p}" of ${schema}.${table}?`)
              }
            >
              Drop policy {p}
            </button>
          ))}
        </p>
      )}
      <ErrorText error={error} />
    </details>
  );
}

const ROLES = ['anon', 'authenticated', 'service_role', 'public'];

function PolicyForm({
  onSubmit,
  build,
}: {
  onSubmit: (p: NewPolicy) => void;
  build: (p: NewPolicy) => { sql?: string; problem?: string };
}) {
  const [p, setP] = useState<NewPolicy>({
    name: '',
    command: 'select',
    permissive: true,
    roles: ['authenticated'],
    using: 'true',
    check: '',
  });
  const [error, setError] = useState<string>();
  const set = (patch: Partial<NewPolicy>) => setP({ ...p, ...patch });
  const built = build(p);
  return (
    <form
      aria-label="New policy"
      className="policy-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!built.sql) return setError(built.problem);
        setError(undefined);
        onSubmit(p);
      }}
    >
      <h4>New policy</h4>
      <div className="inline wrap">
        <Field label="Policy name">
          <input value={p.name} onChange={(e) => set({ name: e.target.value })} />
        </Field>
        <Field label="For">
          <select
            value={p.command}
            onChange={(e) => set({ command: e.target.value as NewPolicy['command'] })}
          >
            {['select', 'insert', 'update', 'delete', 'all'].map((c) => (
              <option key={c} value={c}>
                {c === 'all' ? 'all commands' : c}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Kind">
          <select
            value={p.permissive ? 'permissive' : 'restrictive'}
            onChange={(e) => set({ permissive: e.target.value === 'permissive' })}
          >
            <option value="permissive">permissive (any allows)</option>
            <option value="restrictive">restrictive (all must allow)</option>
          </select>
        </Field>
      </div>
      <fieldset className="inline wrap">
        <legend>To roles</legend>
        {ROLES.map((r) => (
          <label key={r} className="check">
            <input
              type="checkbox"
              checked={p.roles.includes(r)}
              onChange={(e) =>
                set({ roles: e.target.checked ? [...p.roles, r] : p.roles.filter((x) => x !== r) })
              }
            />{' '}
            {r}
          </label>
        ))}
      </fieldset>
      <Field label="Using (which existing rows)">
        <input
          className="mono full-width"
          value={p.using}
          placeholder="auth.uid() = user_id"
          onChange={(e) => set({ using: e.target.value })}
        />
      </Field>
      <Field label="With check (which new rows)">
        <input
          className="mono full-width"
          value={p.check}
          placeholder="auth.uid() = user_id"
          onChange={(e) => set({ check: e.target.value })}
        />
      </Field>
      <details>
        <summary>SQL</summary>
        <pre className="mono full-width">{built.sql ?? built.problem}</pre>
      </details>
      <button type="submit">Create policy</button>
      <ErrorText error={error} />
    </form>
  );
}

function ChangeColumn({
  columns,
  onSubmit,
  build,
}: {
  columns: string[];
  onSubmit: (sql: string) => void;
  build: (c: ColumnChange) => { sql?: string; problem?: string };
}) {
  const blank: ColumnChange = {
    column: '',
    type: '',
    defaultAction: 'keep',
    defaultExpr: '',
    nullable: 'keep',
  };
  const [c, setC] = useState<ColumnChange>(blank);
  const [error, setError] = useState<string>();
  const set = (patch: Partial<ColumnChange>) => setC({ ...c, ...patch });
  const built = build(c);
  return (
    <form
      aria-label="Change a column"
      onSubmit={(e) => {
        e.preventDefault();
        if (!built.sql) return setError(built.problem);
        setError(undefined);
        onSubmit(built.sql);
        setC(blank);
      }}
    >
      <fieldset className="column-fields">
        <legend>Change a column</legend>
        <Field label="Column to change">
          <select value={c.column} onChange={(e) => set({ column: e.target.value })}>
            <option value="">choose…</option>
            {columns.map((x) => (
              <option key={x}>{x}</option>
            ))}
          </select>
        </Field>
        <Field label="New type">
          <input
            className="full-width"
            list="pg-types"
            value={c.type}
            placeholder="keep"
            onChange={(e) => set({ type: e.target.value })}
          />
        </Field>
        <Field label="Default">
          <select
            value={c.defaultAction}
            onChange={(e) => set({ defaultAction: e.target.value as ColumnChange['defaultAction'] })}
          >
            <option value="keep">keep</option>
            <option value="set">set to…</option>
            <option value="drop">drop</option>
          </select>
        </Field>
        {c.defaultAction === 'set' && (
          <Field label="New default">
            <input
              className="full-width"
              value={c.defaultExpr}
              onChange={(e) => set({ defaultExpr: e.target.value })}
            />
          </Field>
        )}
        <Field label="Nullable">
          <select
            value={c.nullable}
            onChange={(e) => set({ nullable: e.target.value as ColumnChange['nullable'] })}
          >
            <option value="keep">keep</option>
            <option value="yes">yes (drop not null)</option>
            <option value="no">no (set not null)</option>
          </select>
        </Field>
      </fieldset>
      <button type="submit" disabled={!c.column}>
        Change column
      </button>
      <ErrorText error={error} />
    </form>
  );
}
