/**
 * Settings: secrets (names and digests; set and unset), functions, custom hostname, network bans
 * and restrictions, the encryption root key. Each section shows the API's answer, or its error
 * (a role that may not read a section gets the API's 403 message there).
 */
import { useState } from 'react';
import { ApiError, management } from '../api';
import { CopyValue } from '../copy-value';
import { DataTable } from '../data-table';
import { attempt, ErrorText, Field } from '../form';
import { useLoad } from '../use-load';
import type { ProjectProps } from '../project-props';
import { NetworkBans, NetworkRestrictions } from './settings-network';

export function SettingsPage({ project }: ProjectProps) {
  const ref = project.ref;
  return (
    <>
      <h1>Settings</h1>
      <Secrets projectRef={ref} />
      <Functions projectRef={ref} />
      <CustomHostname projectRef={ref} />
      <NetworkBans projectRef={ref} />
      <NetworkRestrictions projectRef={ref} />
      <RootKey projectRef={ref} />
    </>
  );
}

/** The API answers 400 while no custom hostname is set up: that is a state, not an error. */
function CustomHostname({ projectRef }: { projectRef: string }) {
  const data = useLoad(
    () =>
      management('GET', `/projects/${projectRef}/custom-hostname`).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 400) return null;
        throw err;
      }),
    [projectRef],
  );
  return (
    <section className="card">
      <h2>Custom hostname</h2>
      <ErrorText error={data.error} />
      {data.data === null && (
        <p className="muted" data-state="not-configured">
          Not configured. The project answers on its default address; set a custom hostname up through the
          Management API (<code>POST /v1/projects/{projectRef}/custom-hostname/initialize</code>).
        </p>
      )}
      {data.data !== undefined && data.data !== null && (
        <pre className="json">{JSON.stringify(data.data, null, 2)}</pre>
      )}
    </section>
  );
}

/** Platform-managed secrets (URL and keys) are set by the platform and cannot be unset. */
const RESERVED = /^SUPABASE_/;

function Secrets({ projectRef }: { projectRef: string }) {
  const list = useLoad(
    () => management<{ name: string; value: string }[]>('GET', `/projects/${projectRef}/secrets`),
    [projectRef],
  );
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [error, setError] = useState<string>();
  const [rowError, setRowError] = useState<{ name: string; message?: string }>();
  const set = async (e: React.FormEvent) => {
    e.preventDefault();
    if (
      await attempt(
        () => management('POST', `/projects/${projectRef}/secrets`, [{ name: name.trim(), value }]),
        setError,
      )
    ) {
      setName('');
      setValue('');
      list.reload();
    }
  };
  const unset = (n: string) => {
    if (!confirm(`Unset the secret ${n}? Functions will no longer see it.`)) return;
    void attempt(
      async () => {
        await management('DELETE', `/projects/${projectRef}/secrets`, [n]);
        list.reload();
      },
      (message) => setRowError({ name: n, message }),
    );
  };
  return (
    <section className="card">
      <h2>Secrets</h2>
      <ErrorText error={list.error} />
      <ul className="secrets">
        {list.data?.map((s) => (
          <li key={s.name}>
            <code>{s.name}</code> <span className="muted digest">digest {s.value}</span>{' '}
            {RESERVED.test(s.name) ? (
              <span className="muted">set by the platform</span>
            ) : (
              <button type="button" className="danger" onClick={() => unset(s.name)}>
                Unset
              </button>
            )}
            {rowError?.name === s.name && <ErrorText error={rowError.message} />}
          </li>
        ))}
        {list.data?.length === 0 && (
          <li className="empty">
            No secrets yet. Add one below; functions read it as an environment variable.
          </li>
        )}
      </ul>
      <form className="grid-form" onSubmit={(e) => void set(e)}>
        <Field label="Name">
          <input name="secret-name" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label="Value">
          <input
            name="secret-value"
            type="password"
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
        </Field>
        <ErrorText error={error} />
        <button type="submit">Set secret</button>
      </form>
    </section>
  );
}

function Functions({ projectRef }: { projectRef: string }) {
  const list = useLoad(
    () => management<Record<string, unknown>[]>('GET', `/projects/${projectRef}/functions`),
    [projectRef],
  );
  const [slug, setSlug] = useState<string>();
  const detail = useLoad(
    () =>
      slug
        ? management<Record<string, unknown>>('GET', `/projects/${projectRef}/functions/${slug}`)
        : Promise.resolve(undefined),
    [projectRef, slug],
  );
  return (
    <section className="card">
      <h2>Functions</h2>
      <ErrorText error={list.error} />
      {list.data && (
        <ul>
          {list.data.map((f) => (
            <li key={String(f.slug)}>
              <button type="button" className="link" onClick={() => setSlug(String(f.slug))}>
                {String(f.slug)}
              </button>{' '}
              <span className="muted">
                {String(f.status)} · version {String(f.version)}
              </span>
            </li>
          ))}
          {list.data.length === 0 && (
            <li className="empty">
              No functions deployed. Deploy one with{' '}
              <code>supabase functions deploy &lt;name&gt; --use-api</code> or the Management API.
            </li>
          )}
        </ul>
      )}
      <ErrorText error={detail.error} />
      {detail.data && <DataTable rows={[detail.data]} />}
    </section>
  );
}

function RootKey({ projectRef }: { projectRef: string }) {
  const key = useLoad(
    () => management<{ root_key: string }>('GET', `/projects/${projectRef}/pgsodium`),
    [projectRef],
  );
  return (
    <section className="card">
      <h2>Encryption root key</h2>
      <ErrorText error={key.error} />
      {key.data && <CopyValue label="root key" value={key.data.root_key} secret />}
    </section>
  );
}
