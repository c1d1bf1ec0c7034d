// Where things are: the repo root, Strata's compiled output (dist/), the results folder.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const here = fileURLToPath(new URL('./', import.meta.url));
export const resultsDir = join(root, 'benchmarks', 'results');

/** A file:// URL of dist/<rel> (for dynamic import). */
export function dist(rel) {
  return pathToFileURL(join(root, 'dist', rel)).href;
}

export function distExists(rel) {
  return existsSync(join(root, 'dist', rel));
}
