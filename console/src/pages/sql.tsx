/** SQL editor: runs SQL as the project owner through the Management API's query endpoint. */
import { useState } from 'react';
import { runSql } from '../api';
import { DataTable } from '../data-table';
import { ErrorText } from '../form';
import type { ProjectProps } from './project-shell';

export function SqlPage({ project }: ProjectProps) {
  const [sql, setSql] = useState('select now();');
  const [rows, setRows] = useState<Record<string, unknown>[]>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [took, setTook] = useState<number>();
  const run = async () => {
    setBusy(true);
    setError(undefined);
    const t0 = performance.now();
    try {
      setRows(await runSql(project.ref, sql));
      setTook(performance.now() - t0);
    } catch (err) {
      setRows(undefined);
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <h1>SQL editor</h1>
      <textarea
        className="sql"
        aria-label="SQL"
        spellCheck={false}
        value={sql}
        onChange={(e) => setSql(e.target.value)}
        onKeyDown={(e) => {
          if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') void run();
        }}
      />
      <p>
        <button type="button" onClick={() => void run()} disabled={busy}>
          {busy ? 'Running…' : 'Run'}
        </button>{' '}
        <span className="muted">Ctrl+Enter · runs as the project owner</span>
      </p>
      <ErrorText error={error} />
      {rows && (
        <div className="sql-result">
          <p className="muted">
            {rows.length} row{rows.length === 1 ? '' : 's'}
            {took !== undefined ? ` · ${Math.round(took)} ms` : ''}
          </p>
          <DataTable rows={rows} />
        </div>
      )}
    </>
  );
}
