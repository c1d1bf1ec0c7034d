/**
 * A function's files as the platform handles them (the Bundle) and their rules: paths are
 * relative, `/`-separated and never leave the bundle folder; a path is never both a file and a
 * folder. Read from a stored body by bundle.ts (eszip bodies: eszip.ts), checked at deploy
 * (import-check.ts) and written for the workers (function-catalog.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export class BundleError extends Error {}

export interface Bundle {
  /** Relative path → bytes. */
  files: Map<string, Buffer>;
  /** Relative path of the entrypoint (a key of files). */
  entry: string;
  /** Relative path of the import map, when one was uploaded. */
  importMap?: string;
}

/** File systems' limits on one name and on a whole path (bytes). */
const MAX_NAME_BYTES = 255;
const MAX_PATH_BYTES = 1024;
/** Files one bundle may have: each is written twice (deploy check, then the bundle folder). */
export const MAX_FILES = 10_000;

/**
 * A relative path inside a bundle, or an error: no `..`, no NUL, no backslash, and short enough
 * to be written (each name at most 255 bytes, the path at most 1024).
 */
export function safeRelPath(p: string): string {
  const invalid = () => new BundleError(`Invalid file path: ${JSON.stringify(p.slice(0, 300))}`);
  if (p.includes('\0') || p.includes('\\')) throw invalid();
  const parts = p
    .replace(/^file:\/\//, '')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  if (parts.length === 0 || parts.includes('..')) throw invalid();
  const rel = parts.join('/');
  if (Buffer.byteLength(rel) > MAX_PATH_BYTES || parts.some((s) => Buffer.byteLength(s) > MAX_NAME_BYTES))
    throw invalid();
  return rel;
}

/** Refuses a bundle where one file's path is another file's folder (it could not be written). */
export function checkLayout(files: Map<string, Buffer>): void {
  for (const path of files.keys())
    for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1))
      if (files.has(path.slice(0, i)))
        throw new BundleError(
          `Invalid file path: ${JSON.stringify(path.slice(0, i))} is both a file and a folder`,
        );
}

/** The uploaded file a path names: the same relative path, or the one it ends with (absolute vs relative paths). */
export function findFile(files: Map<string, Buffer>, path: string): string | undefined {
  const rel = safeRelPath(path);
  if (files.has(rel)) return rel;
  let best: string | undefined;
  for (const k of files.keys()) {
    if ((rel.endsWith(`/${k}`) || k.endsWith(`/${rel}`)) && (!best || k.length > best.length)) best = k;
  }
  return best;
}

/** Writes the bundle's files under dir (created). */
export function writeBundle(dir: string, bundle: Bundle): void {
  for (const [rel, bytes] of bundle.files) {
    const path = join(dir, safeRelPath(rel));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, bytes);
  }
}
