/**
 * One function: its code in an editor (TypeScript highlighting; deploy sends every file back, the
 * edited one changed), a request builder whose answer is shown as text, its logs, and delete.
 */
import { javascript } from '@codemirror/lang-javascript';
import type { EditorView } from '@codemirror/view';
import { useEffect, useRef, useState } from 'react';
import { mountEditor } from '../code-editor';
import { attempt, ErrorText, Field } from '../form';
import { shortDate } from '../format';
import {
  defaultEntrypoint,
  deleteFunction,
  deployFunction,
  type EdgeFunction,
  functionLogs,
  type InvokeAnswer,
  type InvokeRequest,
  invokeFunction,
  loadSources,
  parseHeaderLines,
  type SourceFile,
} from '../functions-api';
import { useLoad } from '../use-load';

interface Props {
  projectRef: string;
  fn: EdgeFunction;
  onChanged: () => void;
  onDeleted: () => void;
}

export function FunctionDetail({ projectRef, fn, onChanged, onDeleted }: Props) {
  const [error, setError] = useState<string>();
  const remove = () => {
    if (!confirm(`Delete the function ${fn.slug}? Its URL stops answering at once.`)) return;
    void attempt(async () => {
      await deleteFunction(projectRef, fn.slug);
      onDeleted();
    }, setError);
  };
  return (
    <section className="function-detail" aria-label={`Function ${fn.slug}`}>
      <h2>{fn.slug}</h2>
      <p className="muted">
        Version {fn.version} · updated {shortDate(new Date(fn.updated_at).toISOString())} ·{' '}
        {fn.verify_jwt ? 'requires a JWT' : 'open to requests without a JWT'}{' '}
        <button type="button" className="danger" onClick={remove}>
          Delete function
        </button>
      </p>
      <ErrorText error={error} />
      <CodePanel projectRef={projectRef} fn={fn} onDeployed={onChanged} />
      <InvokePanel projectRef={projectRef} slug={fn.slug} />
      <LogsPanel projectRef={projectRef} slug={fn.slug} />
    </section>
  );
}

function CodePanel({
  projectRef,
  fn,
  onDeployed,
}: {
  projectRef: string;
  fn: EdgeFunction;
  onDeployed: () => void;
}) {
  const sources = useLoad(() => loadSources(projectRef, fn.slug), [projectRef, fn.slug, fn.version]);
  const entry = fn.entrypoint_path ?? defaultEntrypoint(fn.slug);
  const [files, setFiles] = useState<SourceFile[]>([]);
  const [open, setOpen] = useState<string>();
  const [verify, setVerify] = useState(fn.verify_jwt);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView>();

  useEffect(() => {
    if (!sources.data) return;
    setFiles(sources.data);
    const first =
      sources.data.find((f) => f.path === entry || entry.endsWith(`/${f.path}`)) ?? sources.data[0];
    setOpen(first?.path);
  }, [sources.data, entry]);

  const shown = files.find((f) => f.path === open);
  // biome-ignore lint/correctness/useExhaustiveDependencies: one editor per opened file
  useEffect(() => {
    if (!host.current || !shown) return;
    const path = shown.path;
    const mounted = mountEditor(host.current, {
      doc: shown.text,
      label: `Source of ${path}`,
      extensions: [javascript({ typescript: /\.tsx?$/.test(path) || !/\.jsx?$/.test(path) })],
    });
    view.current = mounted.view;
    return () => {
      const text = mounted.view.state.doc.toString();
      setFiles((all) => all.map((f) => (f.path === path ? { ...f, text } : f)));
      view.current = undefined;
      mounted.destroy();
    };
  }, [open, host.current]);

  const deploy = async () => {
    setBusy(true);
    const edited = files.map((f) =>
      f.path === open && view.current ? { ...f, text: view.current.state.doc.toString() } : f,
    );
    await attempt(async () => {
      await deployFunction(
        projectRef,
        fn.slug,
        {
          entrypoint_path: entry,
          verify_jwt: verify,
          ...(fn.import_map_path ? { import_map_path: fn.import_map_path } : {}),
        },
        edited,
      );
      onDeployed();
    }, setError);
    setBusy(false);
  };

  return (
    <div className="card">
      <h3>Code</h3>
      <ErrorText error={sources.error} />
      {files.length > 1 && (
        <Field label="File">
          <select value={open} onChange={(e) => setOpen(e.target.value)}>
            {files.map((f) => (
              <option key={f.path} value={f.path}>
                {f.path}
                {f.path === entry ? ' (entrypoint)' : ''}
              </option>
            ))}
          </select>
        </Field>
      )}
      {sources.loading && <p className="muted">Loading the sources…</p>}
      <div className="code-editor" ref={host} />
      <p className="inline wrap">
        <label className="check">
          <input type="checkbox" checked={verify} onChange={(e) => setVerify(e.target.checked)} /> Require a
          valid JWT
        </label>
        <button type="button" className="primary" disabled={busy || !shown} onClick={() => void deploy()}>
          {busy ? 'Deploying…' : 'Deploy'}
        </button>
      </p>
      <ErrorText error={error} />
    </div>
  );
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

function InvokePanel({ projectRef, slug }: { projectRef: string; slug: string }) {
  const [method, setMethod] = useState('POST');
  const [path, setPath] = useState('');
  const [headers, setHeaders] = useState('content-type: application/json');
  const [body, setBody] = useState('{"name": "Strata"}');
  const [role, setRole] = useState<InvokeRequest['role']>('anon');
  const [sub, setSub] = useState('');
  const [answer, setAnswer] = useState<InvokeAnswer>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const send = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setAnswer(undefined);
    await attempt(async () => {
      const req: InvokeRequest = { method, path, headers: parseHeaderLines(headers), role };
      if (method !== 'GET' && method !== 'HEAD') req.body = body;
      if (role === 'authenticated' && sub.trim()) req.sub = sub.trim();
      setAnswer(await invokeFunction(projectRef, slug, req));
    }, setError);
    setBusy(false);
  };
  return (
    <form className="card invoke" aria-label="Test request" onSubmit={(e) => void send(e)}>
      <h3>Test</h3>
      <div className="inline wrap">
        <Field label="Method">
          <select value={method} onChange={(e) => setMethod(e.target.value)}>
            {METHODS.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </Field>
        <Field label={`Path after /functions/v1/${slug}`}>
          <input value={path} onChange={(e) => setPath(e.target.value)} placeholder="/optional/path?query" />
        </Field>
        <Field label="Send as">
          <select value={role} onChange={(e) => setRole(e.target.value as InvokeRequest['role'])}>
            <option value="anon">anon (the anon key)</option>
            <option value="authenticated">authenticated user</option>
            <option value="service_role">service_role</option>
          </select>
        </Field>
        {role === 'authenticated' && (
          <Field label="User id (sub)">
            <input value={sub} onChange={(e) => setSub(e.target.value)} placeholder="uuid" />
          </Field>
        )}
      </div>
      <Field label="Headers (one name: value per line)">
        <textarea className="mono" rows={3} value={headers} onChange={(e) => setHeaders(e.target.value)} />
      </Field>
      {method !== 'GET' && method !== 'HEAD' && (
        <Field label="Body">
          <textarea className="mono" rows={4} value={body} onChange={(e) => setBody(e.target.value)} />
        </Field>
      )}
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Sending…' : 'Send request'}
      </button>
      <ErrorText error={error} />
      {answer && <Answer answer={answer} />}
    </form>
  );
}

function Answer({ answer }: { answer: InvokeAnswer }) {
  let text = answer.body;
  if (answer.body_encoding === 'utf8' && /json/i.test(answer.headers['content-type'] ?? '')) {
    try {
      text = JSON.stringify(JSON.parse(answer.body), null, 2);
    } catch {}
  }
  return (
    <div className="answer" aria-live="polite">
      <p>
        <strong>
          Status {answer.status}
          {answer.status >= 400 ? ' (error)' : ''}
        </strong>{' '}
        <span className="muted">· {answer.duration_ms} ms</span>
      </p>
      <details>
        <summary>Response headers ({Object.keys(answer.headers).length})</summary>
        <pre className="mono">
          {Object.entries(answer.headers)
            .map(([k, v]) => `${k}: ${v}`)
            .join('\n')}
        </pre>
      </details>
      {answer.body_encoding === 'base64' ? (
        <p className="muted">Binary body ({Math.round((answer.body.length * 3) / 4)} bytes), not shown.</p>
      ) : (
        <figure className="response-body">
          <figcaption className="visually-hidden">Response body</figcaption>
          <pre className="mono">{text || '(empty body)'}</pre>
        </figure>
      )}
      {answer.truncated && <p className="muted">The body was cut at 1 MiB.</p>}
    </div>
  );
}

function LogsPanel({ projectRef, slug }: { projectRef: string; slug: string }) {
  const logs = useLoad(() => functionLogs(projectRef, slug), [projectRef, slug]);
  return (
    <div className="card">
      <h3>
        Logs{' '}
        <button type="button" onClick={logs.reload} disabled={logs.loading}>
          Refresh
        </button>
      </h3>
      <ErrorText error={logs.error} />
      {logs.data?.length === 0 && (
        <p className="empty">No requests or console output yet. Send a test request above.</p>
      )}
      {logs.data && logs.data.length > 0 && (
        <div className="table-wrap">
          <table className="data logs">
            <caption className="visually-hidden">Logs of {slug}</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Kind</th>
                <th scope="col">Message</th>
              </tr>
            </thead>
            <tbody>
              {[...logs.data].reverse().map((l, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: log lines have no id and never reorder
                <tr key={i} className={l.level === 'error' ? 'log-error' : undefined}>
                  <td>{new Date(l.timestamp).toLocaleTimeString()}</td>
                  <td>{l.type === 'invocation' ? `request${l.status ? ` · ${l.status}` : ''}` : l.level}</td>
                  <td className="mono">
                    {l.message}
                    {l.error_code ? ` (${l.error_code})` : ''}
                    {l.duration_ms !== undefined ? ` · ${l.duration_ms} ms` : ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
