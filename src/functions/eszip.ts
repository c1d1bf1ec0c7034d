/**
 * An eszip bundle (as `supabase functions deploy` builds it; `EZBR` + brotli when compressed)
 * unpacked with @deno/eszip into the bundle's local files (file: specifiers, made relative).
 * Remote modules inside the eszip are not written: they must resolve from the Deno cache.
 */
import { brotliDecompressSync } from 'node:zlib';
import type { Bundle } from './bundle.js';

export class EszipError extends Error {}

const EZBR = Buffer.from('EZBR');

export async function unpackEszip(bytes: Buffer, entrypointPath: string | null): Promise<Bundle> {
  const { BundleError, findFile, safeRelPath } = await import('./bundle.js');
  let raw: Uint8Array = bytes;
  if (bytes.subarray(0, 4).equals(EZBR)) {
    try {
      raw = brotliDecompressSync(bytes.subarray(4));
    } catch {
      throw new BundleError('eszip body: brotli data is corrupt');
    }
  }
  const { Parser } = await import('@deno/eszip');
  const files = new Map<string, Buffer>();
  let first: string | undefined;
  try {
    const parser = await Parser.createInstance();
    const specifiers = (await parser.parseBytes(raw)) as string[];
    await parser.load();
    for (const specifier of specifiers) {
      if (!specifier.startsWith('file:')) continue;
      const source = (await parser.getModuleSource(specifier)) as string | undefined;
      if (source === undefined) continue;
      const rel = safeRelPath(decodeURIComponent(new URL(specifier).pathname));
      first ??= rel;
      files.set(rel, Buffer.from(source, 'utf8'));
    }
  } catch (err) {
    if (err instanceof BundleError) throw err;
    throw new BundleError(
      `eszip body could not be read: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const entry = (entrypointPath ? findFile(files, entrypointPath) : undefined) ?? first;
  if (!entry) throw new BundleError('eszip body holds no local modules');
  return { files, entry };
}
