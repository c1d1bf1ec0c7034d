/** Hash routes: `#/`, `#/project/<ref>`, `#/project/<ref>/<tab>`. */
import { useEffect, useState } from 'react';

export type Route = { page: 'projects' } | { page: 'project'; ref: string; tab: ProjectTab };

export const PROJECT_TABS = [
  'home',
  'graphiql',
  'sql',
  'tables',
  'storage',
  'functions',
  'settings',
] as const;
export type ProjectTab = (typeof PROJECT_TABS)[number];

export function parseRoute(hash: string): Route {
  const m = /^#\/project\/([a-z]{20})(?:\/([a-z]+))?/.exec(hash);
  if (m?.[1]) {
    const tab = (PROJECT_TABS as readonly string[]).includes(m[2] ?? '') ? (m[2] as ProjectTab) : 'home';
    return { page: 'project', ref: m[1], tab };
  }
  return { page: 'projects' };
}

export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return parseRoute(hash);
}

export const projectHref = (ref: string, tab: ProjectTab = 'home'): string =>
  tab === 'home' ? `#/project/${ref}` : `#/project/${ref}/${tab}`;
