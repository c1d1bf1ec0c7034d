/**
 * A function's files, from how its body is stored: source text uploaded as JSON (one file), a
 * deploy bundle (multipart/form-data: `metadata` + `file` parts, as written by deploy), an eszip
 * bundle (unpacked with @deno/eszip), or any other raw body (taken as the entrypoint's source).
 * Paths are relative, `/`-separated and never leave the bundle folder.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ESZIP, SOURCE_CONTENT_TYPE } from '../management/functions/function-input.js';
import { entrypointFileName } from '../management/functions/function-body-multipart.js';
import { unpackEszip } from './eszip.js';

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

async function formOf(bytes: Buffer, contentType: string): Promise<FormData> {
  try {
    return await new Response(new Blob([new Uint8Array(bytes)]), {
      headers: { 'content-type': contentType },
    }).formData();
  } catch {
    throw new BundleError('Request body is not valid multipart/form-data');
  }
}

/** Reads a multipart bundle: `metadata` (JSON) and `file` parts named by their paths. */
export async function readMultipartBundle(
  bytes: Buffer,
  contentType: string,
): Promise<{ metadata: Record<string, unknown>; files: Map<string, Buffer> }> {
  const form = await formOf(bytes, contentType);
  let metadata: Record<string, unknown> = {};
  const meta = form.get('metadata');
  if (meta !== null) {
    const text = typeof meta === 'string' ? meta : await meta.text();
    try {
      const v = JSON.parse(text) as unknown;
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error();
      metadata = v as Record<string, unknown>;
    } catch {
      throw new BundleError('metadata must be a JSON object');
    }
  }
  const files = new Map<string, Buffer>();
  for (const [name, value] of form.entries()) {
    if (name === 'metadata' || typeof value === 'string') continue;
    const rel = safeRelPath(value.name || name);
    // Two parts for one path (also `/a.ts` and `a.ts`): which one was meant is unknowable.
    if (files.has(rel)) throw new BundleError(`Duplicate file path: ${JSON.stringify(rel)}`);
    if (files.size >= MAX_FILES) throw new BundleError(`A function may have at most ${MAX_FILES} files`);
    files.set(rel, Buffer.from(await value.arrayBuffer()));
  }
  checkLayout(files);
  return { metadata, files };
}

export interface StoredBody {
  bytes: Buffer;
  contentType: string;
  entrypointPath: string | null;
  importMapPath: string | null;
}

export async function bundleOf(body: StoredBody): Promise<Bundle> {
  const type = (body.contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (type === 'multipart/form-data') {
    const { metadata, files } = await readMultipartBundle(body.bytes, body.contentType);
    const entryPath = String(metadata.deno2_entrypoint_path ?? body.entrypointPath ?? 'index.ts');
    const entry = findFile(files, entryPath);
    if (!entry) throw new BundleError(`Entrypoint ${entryPath} is not among the uploaded files`);
    const mapPath = (metadata.import_map_path as string | undefined) ?? body.importMapPath ?? undefined;
    return { files, entry, importMap: mapPath ? findFile(files, mapPath) : undefined };
  }
  if (type === ESZIP) return unpackEszip(body.bytes, body.entrypointPath);
  // Source text (JSON body) or any other raw body: the entrypoint's source.
  const entry =
    type === SOURCE_CONTENT_TYPE.split(';')[0] ? entrypointFileName(body.entrypointPath) : 'index.ts';
  return { files: new Map([[entry, body.bytes]]), entry };
}

/** Writes the bundle's files under dir (created). */
export function writeBundle(dir: string, bundle: Bundle): void {
  for (const [rel, bytes] of bundle.files) {
    const path = join(dir, safeRelPath(rel));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, bytes);
  }
}
