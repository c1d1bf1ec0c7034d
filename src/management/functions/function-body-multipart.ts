/**
 * M14 with `Accept: multipart/form-data`: the function's sources as a form — a `metadata` field
 * ({"deno2_entrypoint_path": ...}) and one file part per source file. Only source text uploaded
 * as JSON `body` can be served this way (one file, the entrypoint); eszip bundles are opaque here.
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
  const boundary = `----strata-${randomBytes(12).toString('hex')}`;
  const parts = [
    Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="metadata"\r\ncontent-type: application/json\r\n\r\n` +
        JSON.stringify({ deno2_entrypoint_path: entry }) +
        '\r\n',
    ),
    Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="${entry}"; filename="${entry}"\r\ncontent-type: application/typescript\r\n\r\n`,
    ),
    source,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ];
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}
