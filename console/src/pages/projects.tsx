/** Organizations and their projects: list, create (both), delete a project (with confirmation). */
import { useState } from 'react';
import { management } from '../api';
import { attempt, ErrorText, Field } from '../form';
import { statusTone, statusWords } from '../format';
import { projectHref } from '../route';
import { useLoad } from '../use-load';

export interface Organization {
  id: string;
  slug?: string;
  name: string;
}
export interface Project {
  ref: string;
  name: string;
  region: string;
  status: string;
  organization_id: string;
  created_at: string;
  database?: { host: string; version: string };
}

export function ProjectsPage() {
  const orgs = useLoad(() => management<Organization[]>('GET', '/organizations'), []);
  const projects = useLoad(() => management<Project[]>('GET', '/projects'), []);
  // The create forms are folded away until asked for; an empty organization's button opens one.
  const [createIn, setCreateIn] = useState<string>();
  return (
    <main className="page">
      <h1>Projects</h1>
      <ErrorText error={orgs.error ?? projects.error} />
      {orgs.data?.map((org) => {
        const own = projects.data?.filter((p) => p.organization_id === (org.slug ?? org.id)) ?? [];
        return (
          <section key={org.id} className="org">
            <h2>{org.name}</h2>
            {projects.data && own.length === 0 ? (
              <p className="empty">
                No projects in this organization yet.{' '}
                <button type="button" onClick={() => setCreateIn(org.slug ?? org.id)}>
                  Create a project in {org.name}
                </button>
              </p>
            ) : (
              <ul className="projects">
                {own.map((p) => (
                  <ProjectRow key={p.ref} project={p} onDeleted={projects.reload} />
                ))}
              </ul>
            )}
          </section>
        );
      })}
      {orgs.data && (
        <CreateProject
          key={createIn ?? ''}
          orgs={orgs.data}
          initialOrg={createIn}
          onCreated={projects.reload}
        />
      )}
      <CreateOrganization onCreated={orgs.reload} />
    </main>
  );
}

function ProjectRow({ project, onDeleted }: { project: Project; onDeleted: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<string>();
  const del = () =>
    attempt(async () => {
      await management('DELETE', `/projects/${project.ref}`);
      onDeleted();
    }, setError);
  return (
    <li className="project" data-ref={project.ref}>
      <a className="project-link" href={projectHref(project.ref)}>
        {project.name}
      </a>
      <span className={`status ${statusTone(project.status)}`} title={project.status}>
        {statusWords(project.status)}
      </span>
      <span className="muted">
        {project.ref} · {project.region}
      </span>
      {!confirming ? (
        <button type="button" className="danger push" onClick={() => setConfirming(true)}>
          Delete
        </button>
      ) : (
        <span className="confirm">
          Type <b>{project.name}</b> to delete:
          <input aria-label="Confirm project name" value={typed} onChange={(e) => setTyped(e.target.value)} />
          <button
            type="button"
            className="danger"
            disabled={typed !== project.name}
            onClick={() => void del()}
          >
            Delete permanently
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </span>
      )}
      <ErrorText error={error} />
    </li>
  );
}

function CreateProject({
  orgs,
  initialOrg,
  onCreated,
}: {
  orgs: Organization[];
  initialOrg?: string;
  onCreated: () => void;
}) {
  const [name, setName] = useState('');
  const [org, setOrg] = useState(initialOrg ?? orgs[0]?.slug ?? orgs[0]?.id ?? '');
  const [region, setRegion] = useState('');
  const [dbPass, setDbPass] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    const ok = await attempt(async () => {
      const created = await management<Project>('POST', '/projects', {
        name,
        organization_slug: org,
        ...(region.trim() ? { region: region.trim() } : {}),
        db_pass: dbPass,
      });
      onCreated();
      location.hash = projectHref(created.ref);
    }, setError);
    setBusy(false);
    if (ok) setName('');
  };
  return (
    <details className="card" open={Boolean(initialOrg)}>
      <summary>New project</summary>
      <form onSubmit={(e) => void submit(e)} className="grid-form">
        <Field label="Organization">
          <select name="organization" value={org} onChange={(e) => setOrg(e.target.value)}>
            {orgs.map((o) => (
              <option key={o.id} value={o.slug ?? o.id}>
                {o.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Name">
          <input name="name" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label="Region">
          <input
            name="region"
            placeholder="local"
            value={region}
            onChange={(e) => setRegion(e.target.value)}
          />
        </Field>
        <Field label="Database password">
          <input name="db_pass" type="password" value={dbPass} onChange={(e) => setDbPass(e.target.value)} />
        </Field>
        <ErrorText error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create project'}
        </button>
      </form>
    </details>
  );
}

function CreateOrganization({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    const ok = await attempt(async () => {
      await management<Organization>('POST', '/organizations', { name });
      onCreated();
    }, setError);
    setBusy(false);
    if (ok) setName('');
  };
  return (
    <details className="card" data-form="organization">
      <summary>New organization</summary>
      <form onSubmit={(e) => void submit(e)} className="grid-form">
        <Field label="Organization name" error={error}>
          <input name="organization_name" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create organization'}
        </button>
      </form>
    </details>
  );
}
