/** A project's pages: loads the project and (when the caller may read them) its API keys. */
import { lazy, Suspense } from 'react';
import { type ApiKeys, management } from '../api';
import { ErrorText } from '../form';
import { PROJECT_TABS, type ProjectTab, projectHref } from '../route';
import { useLoad } from '../use-load';
import type { ProjectProps } from '../project-props';
import type { Project } from './projects';
import { ProjectHome } from './project-home';
import { StoragePage } from './storage';
import { SettingsPage } from './settings';

// GraphiQL (and its editor) is a chunk of its own, loaded when its tab opens.
const GraphiQLPage = lazy(() => import('./graphiql-page'));
// So is the SQL editor (CodeMirror 6 and its SQL language).
const SqlEditorPage = lazy(() => import('./sql-editor'));
// And the table editor (its data grid: TanStack Table and Virtual).
const TablesPage = lazy(() => import('./tables'));
// And the functions page (its code editor: CodeMirror 6 with JavaScript/TypeScript).
const FunctionsPage = lazy(() => import('./functions'));

const TAB_NAMES: Record<ProjectTab, string> = {
  home: 'Home',
  graphiql: 'GraphiQL',
  sql: 'SQL editor',
  tables: 'Table editor',
  storage: 'Storage',
  functions: 'Edge Functions',
  settings: 'Settings',
};

async function loadKeys(ref: string): Promise<ApiKeys> {
  const list = await management<{ name: string; api_key: string }[]>('GET', `/projects/${ref}/api-keys`);
  const of = (n: string) => list.find((k) => k.name === n)?.api_key ?? '';
  return { anon: of('anon'), serviceRole: of('service_role') };
}

export function ProjectShell({ projectRef, tab }: { projectRef: string; tab: ProjectTab }) {
  const project = useLoad(() => management<Project>('GET', `/projects/${projectRef}`), [projectRef]);
  const keys = useLoad(() => loadKeys(projectRef), [projectRef]);
  if (project.error) return <ErrorText error={project.error} />;
  if (!project.data || keys.loading) return <p className="muted">Loading…</p>;
  const props: ProjectProps = { project: project.data, keys: keys.data, keysError: keys.error };
  return (
    <div className="project-layout">
      <aside className="side">
        <h2 title={projectRef}>{project.data.name}</h2>
        <nav>
          {PROJECT_TABS.map((t) => (
            <a key={t} href={projectHref(projectRef, t)} className={t === tab ? 'active' : undefined}>
              {TAB_NAMES[t]}
            </a>
          ))}
        </nav>
      </aside>
      <main className="page">
        {tab === 'home' && <ProjectHome {...props} />}
        {tab === 'graphiql' && (
          <Suspense fallback={<p className="muted">Loading GraphiQL…</p>}>
            <GraphiQLPage {...props} />
          </Suspense>
        )}
        {tab === 'sql' && (
          <Suspense fallback={<p className="muted">Loading the SQL editor…</p>}>
            <SqlEditorPage {...props} />
          </Suspense>
        )}
        {tab === 'tables' && (
          <Suspense fallback={<p className="muted">Loading the table editor…</p>}>
            <TablesPage {...props} />
          </Suspense>
        )}
        {tab === 'storage' && <StoragePage {...props} />}
        {tab === 'functions' && (
          <Suspense fallback={<p className="muted">Loading the functions page…</p>}>
            <FunctionsPage {...props} />
          </Suspense>
        )}
        {tab === 'settings' && <SettingsPage {...props} />}
      </main>
    </div>
  );
}
