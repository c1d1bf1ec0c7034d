/**
 * A function's files as a multipart form — a `metadata` field ({"deno2_entrypoint_path": ...}) and
 * one file part per source file: how a deploy is stored, and what
 * GET /v1/projects/{ref}/functions/{function_slug}/body answers with `Accept: multipart/form-data`.
 * Only source text uploaded as JSON `body` can be served this way (one file, the entrypoint);
 * eszip bundles are opaque here. Also the entrypoint's file name of a stored body.
 */
import { randomBytes } from 'node:crypto';

export function wantsMultipart(accept: string | undefined): boolean {
  return /multipart\/form-data/i.test(accept ?? '');
}

/** The entrypoint's file name: the basename of entrypoint_path (file:// URL or path), or index.ts. */
export function entrypointFileName(entrypointPath: string | null): string {
  if (!entrypointPath) return 'index.ts';
  const path = entrypointPath.replace(/^file:\/\//, '');
  const base = path.split('/').filter(Boolean).pop();
  return base && /^[\w.-]+$/.test(base) ? base : 'index.ts';
}

export function sourceMultipart(entry: string, source: Buffer): { contentType: string; body: Buffer } {
  return filesMultipart({ deno2_entrypoint_path: entry }, new Map([[entry, source]]), 'name');
}

/**
 * A form of a `metadata` JSON field and one part per file. `partName` 'name' names each part by
 * its path (the body download's shape); 'file' names every part `file` (the deploy upload's).
 */
export function filesMultipart(
  metadata: Record<string, unknown>,
  files: Map<string, Buffer>,
  partName: 'name' | 'file' = 'file',
): { contentType: string; body: Buffer } {
  const boundary = `----strata-${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [
    Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="metadata"\r\ncontent-type: application/json\r\n\r\n` +
        JSON.stringify(metadata) +
        '\r\n',
    ),
  ];
  for (const [path, bytes] of files) {
    const name = JSON.stringify(path).slice(1, -1);
    parts.push(
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="${partName === 'name' ? name : 'file'}"; filename="${name}"\r\ncontent-type: ${path.endsWith('.json') ? 'application/json' : 'application/typescript'}\r\n\r\n`,
      ),
      bytes,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}
