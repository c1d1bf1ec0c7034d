/**
 * SQL editor (a chunk of its own, loaded when the tab opens): CodeMirror 6 with PostgreSQL
 * highlighting and completion of the project's tables and columns; runs all, or the selection, as
 * the project owner through the Management API's query endpoint; results in the data grid with
 * row count and time; an error is marked where PostgreSQL says it is. Snippets and the last text
 * are kept in this browser.
 */
import { PostgreSQL, sql as sqlLanguage } from '@codemirror/lang-sql';
import { setDiagnostics } from '@codemirror/lint';
import { Compartment } from '@codemirror/state';
import { EditorView, keymap } from '@codemirror/view';
import { useEffect, useMemo, useRef, useState } from 'react';
import { runSql } from '../api';
import { mountEditor } from '../code-editor';
import { DataGrid, type Row } from '../data-grid';
import { ErrorText } from '../form';
import { loadCatalog } from '../sql-catalog';
import { errorOffset, loadDraft, loadSnippets, saveDraft, saveSnippets, type Snippet } from '../snippets';
import type { ProjectProps } from '../project-props';

const START = 'select now();';
/** Rows per page of a result (the grid renders only the rows in view; paging keeps a page's DOM and sort small). */
const PAGE = 1000;

export default function SqlEditorPage({ project }: ProjectProps) {
  const ref = project.ref;
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView>();
  const runRef = useRef<() => void>(() => {});
  const [rows, setRows] = useState<Row[]>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [took, setTook] = useState<number>();
  const [page, setPage] = useState(0);
  const [hasSelection, setHasSelection] = useState(false);
  const [snippets, setSnippets] = useState<Snippet[]>(() => loadSnippets(ref));
  const [snippetName, setSnippetName] = useState('');
  const language = useMemo(() => new Compartment(), []);
  // Completion from the catalog once it has loaded, and again after each run (a statement may
  // have made a table); a failure leaves keyword completion only.
  const refreshCatalog = useRef(() => {});
  refreshCatalog.current = () => {
    loadCatalog(ref).then(
      (schema) =>
        view.current?.dispatch({
          effects: language.reconfigure(
            sqlLanguage({ dialect: PostgreSQL, schema, defaultSchema: 'public', upperCaseKeywords: false }),
          ),
        }),
      () => {},
    );
  };

  useEffect(() => {
    if (!host.current) return;
    const { view: v, destroy } = mountEditor(host.current, {
      doc: loadDraft(ref) ?? START,
      label: 'SQL',
      extensions: [
        keymap.of([
          {
            key: 'Mod-Enter',
            run: () => {
              runRef.current();
              return true;
            },
          },
        ]),
        language.of(sqlLanguage({ dialect: PostgreSQL, upperCaseKeywords: false })),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) saveDraft(ref, u.state.doc.toString());
          if (u.selectionSet || u.docChanged) setHasSelection(!u.state.selection.main.empty);
        }),
      ],
    });
    view.current = v;
    refreshCatalog.current();
    return () => {
      view.current = undefined;
      destroy();
    };
  }, [ref, language]);

  const run = async () => {
    const v = view.current;
    if (!v || busy) return;
    const sel = v.state.selection.main;
    const from = sel.empty ? 0 : sel.from;
    const text = sel.empty ? v.state.doc.toString() : v.state.sliceDoc(sel.from, sel.to);
    if (!text.trim()) return;
    setBusy(true);
    setError(undefined);
    v.dispatch(setDiagnostics(v.state, []));
    const t0 = performance.now();
    try {
      setRows(await runSql(ref, text));
      setPage(0);
      setTook(performance.now() - t0);
      refreshCatalog.current();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      setRows(undefined);
      setError(message);
      const at = errorOffset(message, text);
      if (at !== undefined) {
        const pos = Math.min(from + at, v.state.doc.length);
        const end = Math.min(
          v.state.doc.lineAt(pos).to,
          pos + Math.max(1, /^\w+/.exec(text.slice(at))?.[0].length ?? 1),
        );
        v.dispatch(
          setDiagnostics(v.state, [{ from: pos, to: Math.max(end, pos), severity: 'error', message }]),
        );
        v.dispatch({ selection: { anchor: pos }, scrollIntoView: true });
      }
    } finally {
      setBusy(false);
    }
  };
  runRef.current = () => void run();

  const line = error ? /\nLINE (\d+):/.exec(error)?.[1] : undefined;
  const columns = useMemo(
    () => [...new Set((rows ?? []).flatMap((r) => Object.keys(r)))].map((name) => ({ name })),
    [rows],
  );
  const saveSnippet = (e: React.FormEvent) => {
    e.preventDefault();
    const name = snippetName.trim();
    const body = view.current?.state.doc.toString() ?? '';
    if (!name) return;
    const next = [...snippets.filter((s) => s.name !== name), { name, sql: body }].sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    saveSnippets(ref, next);
    setSnippets(next);
    setSnippetName('');
  };
  const openSnippet = (name: string) => {
    const s = snippets.find((x) => x.name === name);
    const v = view.current;
    if (s && v) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: s.sql } });
  };
  const deleteSnippet = (name: string) => {
    if (!confirm(`Delete the snippet ${name}?`)) return;
    const next = snippets.filter((s) => s.name !== name);
    saveSnippets(ref, next);
    setSnippets(next);
  };

  return (
    <>
      <h1>SQL editor</h1>
      <div className="sql-toolbar">
        <button type="button" className="primary" onClick={() => void run()} disabled={busy}>
          {busy ? 'Running…' : hasSelection ? 'Run selection' : 'Run'}
        </button>
        <span className="muted">Ctrl+Enter · runs as the project owner</span>
      </div>
      <div className="sql-editor" ref={host} />
      <details className="snippets">
        <summary>Snippets ({snippets.length})</summary>
        {snippets.length === 0 ? (
          <p className="empty">No snippets yet. Name the editor's text below to keep it in this browser.</p>
        ) : (
          <ul className="snippet-list">
            {snippets.map((s) => (
              <li key={s.name}>
                <button type="button" className="link" onClick={() => openSnippet(s.name)}>
                  {s.name}
                </button>{' '}
                <button
                  type="button"
                  className="link danger-link"
                  aria-label={`Delete snippet ${s.name}`}
                  onClick={() => deleteSnippet(s.name)}
                >
                  delete
                </button>
              </li>
            ))}
          </ul>
        )}
        <form className="inline wrap" onSubmit={saveSnippet}>
          <input
            aria-label="Snippet name"
            placeholder="snippet name"
            value={snippetName}
            onChange={(e) => setSnippetName(e.target.value)}
          />
          <button type="submit">Save snippet</button>
        </form>
      </details>
      {error && (
        <div className="sql-error">
          {line && <p className="muted">Error at line {line} (marked in the editor):</p>}
          <ErrorText error={error} />
        </div>
      )}
      {rows && (
        <div className="sql-result">
          <p className="muted" aria-live="polite">
            {rows.length} row{rows.length === 1 ? '' : 's'}
            {took !== undefined ? ` · ${Math.round(took)} ms` : ''}
          </p>
          {rows.length === 0 ? (
            <p className="empty">The statement ran and returned no rows.</p>
          ) : (
            <>
              <DataGrid
                key={page}
                label="Query result"
                rows={rows.slice(page * PAGE, (page + 1) * PAGE)}
                columns={columns}
                height={360}
              />
              {rows.length > PAGE && (
                <p className="pager">
                  <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
                    Previous
                  </button>
                  <span>
                    Rows {page * PAGE + 1}–{Math.min(rows.length, (page + 1) * PAGE)} of {rows.length}
                  </span>
                  <button
                    type="button"
                    disabled={(page + 1) * PAGE >= rows.length}
                    onClick={() => setPage(page + 1)}
                  >
                    Next
                  </button>
                </p>
              )}
            </>
          )}
        </div>
      )}
    </>
  );
}
