// Where things are: the repo root, Strata's compiled output (dist/), the results folder.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const here = fileURLToPath(new URL('./', import.meta.url));
export const resultsDir = join(root, 'benchmarks', 'results');

/**
 * Strata's compiled output: dist/ (what `npm run bench:graphql` builds). BENCH_DIST points at
 * another build of the same tree (it must sit beside a sql/ folder, as dist/ does).
 */
export const distDir = process.env.BENCH_DIST ?? join(root, 'dist');

/** A file:// URL of dist/<rel> (for dynamic import). */
export function dist(rel) {
  return pathToFileURL(join(distDir, rel)).href;
}

export function distExists(rel) {
  return existsSync(join(distDir, rel));
}
