/**
 * GraphiQL (the `graphiql` npm package) on the project's GraphQL endpoint, with its `apikey` header
 * and a chosen role's JWT prefilled: anon, authenticated (a user id; the Management API signs a
 * one-hour token), or service_role. Loaded lazily (its own chunk and stylesheet). Subscriptions run
 * over graphql-ws on the same path.
 */
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import { useEffect, useMemo, useState } from 'react';
import { management, projectBase } from '../api';
import { ErrorText, Field } from '../form';
import { NeedsKeys, type ProjectProps } from '../project-props';

type Role = 'anon' | 'authenticated' | 'service_role';
const INTROSPECTION_HINT = `comment on schema public is '@graphql({"introspection": true})';`;

function useGraphiQLStylesheet(): void {
  useEffect(() => {
    const href = document.querySelector<HTMLMetaElement>('meta[name="graphiql-css"]')?.content;
    if (!href || document.querySelector(`link[href="${href}"]`)) return;
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = href;
    document.head.append(link);
  }, []);
}

export default function GraphiQLPage({ project, keys, keysError }: ProjectProps) {
  useGraphiQLStylesheet();
  const [role, setRole] = useState<Role>('anon');
  const [userId, setUserId] = useState('00000000-0000-4000-8000-000000000001');
  const [jwt, setJwt] = useState<string>();
  const [error, setError] = useState<string>();
  const [introspection, setIntrospection] = useState<'on' | 'off' | 'unknown'>('unknown');
  const url = `${projectBase(project.ref)}/graphql/v1`;

  useEffect(() => {
    if (!keys) return;
    setError(undefined);
    if (role === 'anon') setJwt(keys.anon);
    else if (role === 'service_role') setJwt(keys.serviceRole);
    else {
      setJwt(undefined);
      management<{ token: string }>('POST', `/projects/${project.ref}/console/role-token`, {
        role: 'authenticated',
        sub: userId,
      }).then(
        (r) => setJwt(r.token),
        (err: Error) => setError(err.message),
      );
    }
  }, [keys, role, userId, project.ref]);

  useEffect(() => {
    if (!keys) return;
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', apikey: keys.anon },
      body: JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
    })
      .then((r) => r.json())
      .then((b: { errors?: unknown[] }) => setIntrospection(b.errors?.length ? 'off' : 'on'))
      .catch(() => setIntrospection('unknown'));
  }, [keys, url]);

  const headers = useMemo(
    () => (keys && jwt ? { apikey: keys.anon, authorization: `Bearer ${jwt}` } : undefined),
    [keys, jwt],
  );
  // Requests carry what the headers editor holds (prefilled below), so edits there count.
  // Subscriptions (live queries, docs/realtime.md) go over a WebSocket on the same path, with the
  // prefilled headers as connection_init's payload.
  const fetcher = useMemo(
    () =>
      createGraphiQLFetcher({
        url,
        subscriptionUrl: new URL(url, window.location.href).href.replace(/^http/, 'ws'),
        wsConnectionParams: headers,
      }),
    [url, headers],
  );

  if (!keys) return <NeedsKeys error={keysError} />;
  return (
    <div className="graphiql-page">
      <div className="graphiql-bar">
        <Field label="Role">
          <select name="role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            <option value="anon">anon</option>
            <option value="authenticated">authenticated (user id)</option>
            <option value="service_role">service_role</option>
          </select>
        </Field>
        {role === 'authenticated' && (
          <Field label="User id">
            <input name="user-id" value={userId} onChange={(e) => setUserId(e.target.value)} />
          </Field>
        )}
        <div className="field endpoint">
          <span>Endpoint</span>
          <code>{url}</code>
        </div>
      </div>
      <ErrorText error={error} />
      {introspection === 'off' && (
        <p className="note" role="note">
          Introspection is off for this project's schema, so the docs explorer stays empty and queries are not
          autocompleted (queries still run). Turn it on in the SQL editor: <code>{INTROSPECTION_HINT}</code>
        </p>
      )}
      <div className="graphiql-host">
        {headers && (
          <GraphiQL
            key={`${role}:${jwt}`}
            fetcher={fetcher}
            headers={JSON.stringify(headers, null, 2)}
            defaultQuery={'{\n  __typename\n}\n'}
            shouldPersistHeaders={false}
          />
        )}
      </div>
    </div>
  );
}
