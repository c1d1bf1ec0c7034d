/** A project's addresses, API keys (service_role hidden until revealed) and connection strings. */
import { management, projectBase } from '../api';
import { CopyValue } from '../copy-value';
import { ErrorText } from '../form';
import { useLoad } from '../use-load';
import type { ProjectProps } from '../project-props';

interface Pooler {
  connection_string: string;
  db_host: string;
  db_port: number;
  db_user: string;
  db_name: string;
  pool_mode: string;
}

export function ProjectHome({ project, keys, keysError }: ProjectProps) {
  const base = projectBase(project.ref);
  const pooler = useLoad(
    () => management<Pooler[]>('GET', `/projects/${project.ref}/config/database/pooler`),
    [project.ref],
  );
  const p = pooler.data?.[0];
  return (
    <>
      <h1>{project.name}</h1>
      <p className="muted">
        {project.ref} · {project.region} · {project.status}
        {project.database ? ` · PostgreSQL ${project.database.version}` : ''}
      </p>
      <section className="card">
        <h2>API</h2>
        <CopyValue label="API URL" value={base} />
        <CopyValue label="GraphQL URL" value={`${base}/graphql/v1`} />
        <CopyValue label="Storage URL" value={`${base}/storage/v1`} />
      </section>
      <section className="card">
        <h2>API keys</h2>
        {keys ? (
          <>
            <CopyValue label="anon" value={keys.anon} />
            <CopyValue label="service_role" value={keys.serviceRole} secret />
          </>
        ) : (
          <ErrorText
            error={`Your role may not read this project's keys${keysError ? `: ${keysError}` : ''}`}
          />
        )}
      </section>
      <section className="card">
        <h2>Connection strings</h2>
        <ErrorText error={pooler.error} />
        {p && (
          <>
            <CopyValue label="Connection string" value={p.connection_string} />
            <CopyValue label="Host" value={p.db_host} />
            <CopyValue label="Port" value={String(p.db_port)} />
            <CopyValue label="Database" value={p.db_name} />
            <CopyValue label="User" value={p.db_user} />
          </>
        )}
      </section>
    </>
  );
}
