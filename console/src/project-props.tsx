/** What every project page receives from the project shell, and what it shows without the keys. */
import type { ApiKeys } from './api';
import type { Project } from './pages/projects';

export interface ProjectProps {
  project: Project;
  keys?: ApiKeys;
  keysError?: string;
}

/** What a page shows when the caller may not read the project's keys. */
export function NeedsKeys({ error }: { error?: string }) {
  return (
    <p className="error" role="alert">
      This page needs the project's API keys, which your role may not read{error ? `: ${error}` : ''}.
    </p>
  );
}
