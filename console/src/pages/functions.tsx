/**
 * Edge Functions (a chunk of its own, with its code editor): the project's functions in a table,
 * a new one written and deployed from the browser, and for the selected one its code (edit and
 * deploy), a request builder (method, path, headers, body, role) and its logs.
 */
import { useState } from 'react';
import { NeedsKeys, type ProjectProps } from '../project-props';
import { attempt, ErrorText, Field } from '../form';
import { shortDate } from '../format';
import {
  defaultEntrypoint,
  deployFunction,
  type EdgeFunction,
  listFunctions,
  NEW_FUNCTION_SOURCE,
} from '../functions-api';
import { useLoad } from '../use-load';
import { FunctionDetail } from './function-detail';

const SLUG = /^[A-Za-z][A-Za-z0-9_-]{0,99}$/;

export default function FunctionsPage({ project, keys, keysError }: ProjectProps) {
  const ref = project.ref;
  const fns = useLoad(() => listFunctions(ref), [ref]);
  const [selected, setSelected] = useState<string>();
  const current = fns.data?.find((f) => f.slug === selected);
  return (
    <>
      <h1>Edge Functions</h1>
      <ErrorText error={fns.error} />
      {fns.data?.length === 0 && (
        <p className="empty">
          No functions yet. Write one below and deploy it, or from a project folder run{' '}
          <code>supabase functions deploy &lt;name&gt; --use-api</code>.
        </p>
      )}
      {fns.data && fns.data.length > 0 && (
        <FunctionTable fns={fns.data} selected={selected} onSelect={setSelected} />
      )}
      <details className="card" open={fns.data?.length === 0}>
        <summary>New function</summary>
        <NewFunction
          onDeployed={(f) => {
            fns.reload();
            setSelected(f.slug);
          }}
          deploy={(slug, verify) =>
            deployFunction(ref, slug, { entrypoint_path: defaultEntrypoint(slug), verify_jwt: verify }, [
              { path: defaultEntrypoint(slug), text: NEW_FUNCTION_SOURCE },
            ])
          }
        />
      </details>
      {current &&
        (keys || keysError === undefined ? (
          <FunctionDetail
            key={`${current.slug}:${current.version}`}
            projectRef={ref}
            fn={current}
            onChanged={fns.reload}
            onDeleted={() => {
              setSelected(undefined);
              fns.reload();
            }}
          />
        ) : (
          <NeedsKeys error={keysError} />
        ))}
    </>
  );
}

function FunctionTable({
  fns,
  selected,
  onSelect,
}: {
  fns: EdgeFunction[];
  selected?: string;
  onSelect: (slug: string) => void;
}) {
  return (
    <div className="table-wrap">
      <table className="data functions">
        <caption className="visually-hidden">Functions</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Version</th>
            <th scope="col">Updated</th>
            <th scope="col">Requires a JWT</th>
          </tr>
        </thead>
        <tbody>
          {fns.map((f) => (
            <tr key={f.id} className={f.slug === selected ? 'selected' : undefined}>
              <td>
                <button
                  type="button"
                  className="link"
                  aria-pressed={f.slug === selected}
                  onClick={() => onSelect(f.slug)}
                >
                  {f.slug}
                </button>
              </td>
              <td>{f.status === 'ACTIVE' ? 'Active' : f.status.toLowerCase()}</td>
              <td>{f.version}</td>
              <td>{shortDate(new Date(f.updated_at).toISOString())}</td>
              <td>{f.verify_jwt ? 'Yes' : 'No'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function NewFunction({
  deploy,
  onDeployed,
}: {
  deploy: (slug: string, verifyJwt: boolean) => Promise<EdgeFunction>;
  onDeployed: (f: EdgeFunction) => void;
}) {
  const [slug, setSlug] = useState('');
  const [verify, setVerify] = useState(true);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (!SLUG.test(slug)) {
      setError('A name starts with a letter, then letters, digits, - or _ (at most 100).');
      return;
    }
    setBusy(true);
    await attempt(async () => {
      onDeployed(await deploy(slug, verify));
      setSlug('');
    }, setError);
    setBusy(false);
  };
  return (
    <form className="inline wrap" aria-label="New function" onSubmit={(e) => void submit(e)}>
      <Field label="Name" error={error}>
        <input value={slug} onChange={(e) => setSlug(e.target.value)} placeholder="hello-world" required />
      </Field>
      <label className="check">
        <input type="checkbox" checked={verify} onChange={(e) => setVerify(e.target.checked)} /> Require a
        valid JWT
      </label>
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Deploying…' : 'Create and deploy'}
      </button>
      <p className="muted">It starts from a hello-world handler; edit its code once it is deployed.</p>
    </form>
  );
}
