/**
 * SQL editor (a chunk of its own, loaded when the tab opens): CodeMirror 6 with PostgreSQL
 * highlighting and completion of the project's tables and columns; runs all, or the selection, as
 * the project owner through the Management API's query endpoint; results in the data grid with
 * row count and time; an error is marked where PostgreSQL says it is. Snippets and the last text
 * are kept in this browser.
 */
import { PostgreSQL, sql as sqlLanguage } from '@codemirror/lang-sql';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { setDiagnostics } from '@codemirror/lint';
import { Compartment, EditorState } from '@codemirror/state';
import { EditorView, keymap } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';
import { basicSetup } from 'codemirror';
import { useEffect, useMemo, useRef, useState } from 'react';
import { runSql } from '../api';
import { DataGrid, type Row } from '../data-grid';
import { ErrorText } from '../form';
import { loadCatalog } from '../sql-catalog';
import { errorOffset, loadDraft, loadSnippets, saveDraft, saveSnippets, type Snippet } from '../snippets';
import type { ProjectProps } from '../project-props';

const START = 'select now();';

/** The page's stylesheet does not reach into the shadow root: the editor's look is set here. */
const editorTheme = EditorView.theme({
  '&': { minHeight: '160px', maxHeight: '45vh', fontSize: '13px', background: '#fff' },
  '.cm-scroller': { fontFamily: 'ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace' },
  '.cm-gutters': { background: '#f7f7f7', color: '#6b6b6b' },
  '&.cm-focused': { outline: '2px solid #2f7d5b' },
});

/** Token colours with at least 4.5:1 contrast on white (the default style's orange has 3.8). */
const highlight = HighlightStyle.define([
  { tag: t.keyword, color: '#7a1fa2' },
  { tag: [t.string, t.special(t.string), t.regexp, t.escape], color: '#a31515' },
  { tag: [t.number, t.bool, t.null, t.atom], color: '#116644' },
  { tag: t.comment, color: '#5c6670', fontStyle: 'italic' },
  { tag: [t.typeName, t.standard(t.name)], color: '#0b5394' },
  { tag: [t.special(t.name), t.labelName], color: '#8a4600' },
  { tag: t.invalid, color: '#b42318' },
]);

/**
 * While the editor is open, a `style` attribute set from script (CodeMirror's tooltips set
 * `style="left: …"` through setAttribute) is applied through the CSSOM (`el.style.cssText`), which
 * the page's CSP allows, instead of as an attribute, which it refuses (no inline style). This
 * loosens nothing: script could always set `el.style`; markup (innerHTML) is still refused.
 * Returns the function that puts setAttribute back.
 */
function styleAttributesThroughCssom(): () => void {
  const proto = Element.prototype;
  const original = proto.setAttribute;
  proto.setAttribute = function (this: Element, name: string, value: string) {
    if (name.toLowerCase() === 'style' && this instanceof HTMLElement) {
      this.style.cssText = value;
      return;
    }
    original.call(this, name, value);
  };
  return () => {
    proto.setAttribute = original;
  };
}

export default function SqlEditorPage({ project }: ProjectProps) {
  const ref = project.ref;
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView>();
  const runRef = useRef<() => void>(() => {});
  const [rows, setRows] = useState<Row[]>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [took, setTook] = useState<number>();
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
    // In a shadow root: CodeMirror's styles then go in a constructed stylesheet (adoptedStyleSheets)
    // instead of a <style> element, which the page's CSP (no inline style) would refuse.
    const shadow = host.current.shadowRoot ?? host.current.attachShadow({ mode: 'open' });
    const parent = document.createElement('div');
    shadow.replaceChildren(parent);
    const restoreSetAttribute = styleAttributesThroughCssom();
    const v = new EditorView({
      root: shadow,
      parent,
      state: EditorState.create({
        doc: loadDraft(ref) ?? START,
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
          basicSetup,
          language.of(sqlLanguage({ dialect: PostgreSQL, upperCaseKeywords: false })),
          EditorView.contentAttributes.of({ 'aria-label': 'SQL' }),
          editorTheme,
          syntaxHighlighting(highlight),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) saveDraft(ref, u.state.doc.toString());
            if (u.selectionSet || u.docChanged) setHasSelection(!u.state.selection.main.empty);
          }),
        ],
      }),
    });
    view.current = v;
    refreshCatalog.current();
    return () => {
      view.current = undefined;
      v.destroy();
      restoreSetAttribute();
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
            <DataGrid label="Query result" rows={rows} columns={columns} height={360} />
          )}
        </div>
      )}
    </>
  );
}
