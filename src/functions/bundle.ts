/**
 * A function's files, from how its body is stored: source text uploaded as JSON (one file), a
 * deploy bundle (multipart/form-data: `metadata` + `file` parts, as written by deploy), an eszip
 * bundle (unpacked with @deno/eszip: eszip.ts), or any other raw body (taken as the entrypoint's
 * source). The Bundle and its path rules: bundle-files.ts.
 */
import { BundleError, type Bundle, checkLayout, findFile, MAX_FILES, safeRelPath } from './bundle-files.js';
import { entrypointFileName } from './function-body-multipart.js';
import { ESZIP, SOURCE_CONTENT_TYPE } from './function-input.js';
import { unpackEszip } from './eszip.js';

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
