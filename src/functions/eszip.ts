/**
 * An eszip bundle (as `supabase functions deploy` builds it; `EZBR` + brotli when compressed)
 * unpacked with @deno/eszip into the bundle's local files (file: specifiers, made relative).
 * Remote modules inside the eszip are not written: they must resolve from the Deno cache.
 *
 * The parser is WebAssembly that panics on some malformed input from a task of its own (an uncaught
 * `RuntimeError: unreachable` that no try/catch around the call sees, which would end the server).
 * So it runs in a worker thread per bundle: a panic, a hang (PARSE_TIMEOUT_MS) or an exit ends
 * only that worker, and the upload gets a 400.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { promisify } from 'node:util';
import { brotliDecompress } from 'node:zlib';
import { BundleError, type Bundle, checkLayout, findFile, safeRelPath } from './bundle-files.js';

export class EszipError extends Error {}

const EZBR = Buffer.from('EZBR');
const PARSE_TIMEOUT_MS = 30_000;
/** Largest eszip an `EZBR` body may decompress to (a few KB of brotli can claim gigabytes). */
const MAX_ESZIP_BYTES = 128 * 1024 * 1024;
const decompress = promisify(brotliDecompress);

/** The worker's code (CommonJS, evaluated): the eszip's local modules as [specifier, source]. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const { Parser } = await import(workerData.eszipUrl);
  const parser = await Parser.createInstance();
  const specifiers = await parser.parseBytes(workerData.bytes);
  await parser.load();
  const files = [];
  for (const specifier of specifiers) {
    if (!specifier.startsWith('file:')) continue;
    const source = await parser.getModuleSource(specifier);
    if (source !== undefined) files.push([specifier, source]);
  }
  parentPort.postMessage({ files });
})().catch((e) => parentPort.postMessage({ error: String((e && e.message) || e) }));
`;

/**
 * The URL of @deno/eszip's ESM entry, for the worker's import(): found the way Node finds the
 * package from here (its exports map has no `require` entry, so require.resolve cannot name it).
 */
function eszipModuleUrl(): string {
  for (const dir of createRequire(import.meta.url).resolve.paths('@deno/eszip') ?? []) {
    const pkgDir = join(dir, '@deno', 'eszip');
    if (!existsSync(join(pkgDir, 'package.json'))) continue;
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
      exports?: { '.'?: { import?: string } };
      module?: string;
    };
    const entry = pkg.exports?.['.']?.import ?? pkg.module;
    if (entry) return pathToFileURL(join(pkgDir, entry)).href;
  }
  throw new Error('@deno/eszip is not installed');
}

/** Parses the eszip in a worker thread; rejects with the parser's message, or how the worker ended. */
function localModules(raw: Uint8Array): Promise<[string, string][]> {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { eszipUrl: eszipModuleUrl(), bytes: raw },
  });
  let timer: NodeJS.Timeout | undefined;
  return new Promise<[string, string][]>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error('parsing took too long')), PARSE_TIMEOUT_MS);
    worker.once('message', (m: { files?: [string, string][]; error?: string }) =>
      m.files ? resolve(m.files) : reject(new Error(m.error ?? 'no answer')),
    );
    worker.once('error', (err) => reject(err));
    worker.once('exit', (code) => reject(new Error(`the parser stopped (exit ${code})`)));
  }).finally(() => {
    clearTimeout(timer);
    void worker.terminate();
  });
}

export async function unpackEszip(bytes: Buffer, entrypointPath: string | null): Promise<Bundle> {
  let raw: Uint8Array = bytes;
  if (bytes.subarray(0, 4).equals(EZBR)) {
    try {
      // Off the event loop (zlib's thread pool), and stopped at MAX_ESZIP_BYTES.
      raw = await decompress(bytes.subarray(4), { maxOutputLength: MAX_ESZIP_BYTES });
    } catch (err) {
      throw new BundleError(
        err instanceof RangeError
          ? `eszip body: decompresses to more than ${MAX_ESZIP_BYTES / 1024 / 1024} MiB`
          : 'eszip body: brotli data is corrupt',
      );
    }
  }
  let modules: [string, string][];
  try {
    modules = await localModules(raw);
  } catch (err) {
    throw new BundleError(
      `eszip body could not be read: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const files = new Map<string, Buffer>();
  let first: string | undefined;
  for (const [specifier, source] of modules) {
    let path: string;
    try {
      path = decodeURIComponent(new URL(specifier).pathname);
    } catch {
      throw new BundleError(
        `eszip body: invalid module specifier ${JSON.stringify(specifier.slice(0, 300))}`,
      );
    }
    const rel = safeRelPath(path);
    first ??= rel;
    files.set(rel, Buffer.from(source, 'utf8'));
  }
  checkLayout(files);
  const entry = (entrypointPath ? findFile(files, entrypointPath) : undefined) ?? first;
  if (!entry) throw new BundleError('eszip body holds no local modules');
  return { files, entry };
}
