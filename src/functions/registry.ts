/**
 * The running functions catalog of a platform, so the Management API (deploy, secrets) can
 * invalidate cached function specs and recycle workers without holding a reference to the server.
 */
import type { Platform } from '../platform/platform.js';
import type { FunctionCatalog } from './function-catalog.js';

const catalogs = new WeakMap<Platform, FunctionCatalog>();

export function registerFunctionCatalog(platform: Platform, catalog: FunctionCatalog): void {
  catalogs.set(platform, catalog);
  // Another process deployed, updated or deleted a function, or changed the project's secrets.
  platform.events.subscribe((e) => {
    if (!e) catalog.invalidateAll();
    else if (e.kind === 'functions') catalog.invalidate(e.ref, e.key);
  });
}

export function functionCatalogOf(platform: Platform): FunctionCatalog | undefined {
  return catalogs.get(platform);
}

/** After a function's code/metadata or (without slug) the project's secrets changed. */
export function functionsChanged(platform: Platform, ref: string, slug?: string): void {
  catalogs.get(platform)?.invalidate(ref, slug);
  void platform.events.publish({ kind: 'functions', ref, key: slug });
}

/** The project is being deleted: its function workers stop and its functions' files go. */
export async function functionsRemoved(platform: Platform, ref: string): Promise<void> {
  await catalogs.get(platform)?.removeProject(ref);
}
