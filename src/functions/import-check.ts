/**
 * Deploy-time resolution: the uploaded files are written to a scratch folder and `deno info
 * --json` loads the whole module graph from them and the platform's Deno cache (seeded with the
 * CLI template's packages, deno-seed.ts; filled from the network, through the platform's proxy
 * settings, only where the network answers), with the imports the platform satisfies itself
 * (platform-imports.ts). An import that cannot be resolved, or a module that cannot be loaded,
 * fails the deploy (400 naming its specifier), never the first call; workers use --cached-only.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Bundle, writeBundle } from './bundle-files.js';
import { withPlatformImports } from './platform-imports.js';

export class UnresolvedImportError extends Error {}

const CHECK_TIMEOUT_MS = 60_000;

function run(
  bin: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      bin,
      args,
      { env, cwd, timeout: CHECK_TIMEOUT_MS, maxBuffer: 32 * 1024 * 1024 },
      (err, stdout, stderr) =>
        resolve({
          code: err ? ((err as { code?: number }).code ?? 1) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
        }),
    );
  });
}

interface InfoResolved {
  specifier?: string;
  error?: string;
}

interface InfoModule {
  specifier?: string;
  error?: string;
  /** Each import of the module: where it resolved to, or why it could not be (`code` / `type`). */
  dependencies?: { specifier?: string; code?: InfoResolved; type?: InfoResolved }[];
}

/** The first import `deno info` could not resolve, or whose module could not be loaded. */
function firstFailure(modules: InfoModule[]): { specifier: string; error: string } | undefined {
  for (const m of modules) {
    if (m.error) return { specifier: m.specifier ?? '', error: m.error };
    // An import that resolves nowhere (a bare specifier in no import map) is reported here, on
    // the importing module, not as a module of its own.
    for (const d of m.dependencies ?? []) {
      const failed = d.code?.error ?? d.type?.error;
      if (failed) return { specifier: d.specifier ?? '', error: failed };
    }
  }
  return undefined;
}

/** Deno's text with the scratch folder's path taken out (the caller knows its own paths). */
function scrub(text: string, dir: string): string {
  const plain = text
    .replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '')
    .split(`file://${dir}/`)
    .join('')
    .split(`${dir}/`)
    .join('');
  return (plain.split('\n')[0] ?? '').trim();
}

export async function checkImports(
  denoBin: string,
  denoDir: string,
  scratchRoot: string,
  uploaded: Bundle,
  /** Deno's network settings (the proxy: runtime.ts moduleEnv). */
  networkEnv: Record<string, string> = {},
): Promise<void> {
  const dir = mkdtempSync(join(scratchRoot, 'deploy-'));
  // Checked as the workers will run it (function-catalog.ts).
  const { bundle } = withPlatformImports(uploaded);
  try {
    writeBundle(dir, bundle);
    const args = ['info', '--json', '--no-config', '--no-lock'];
    // File URLs, not paths: a `#`, `?` or `%` in a file name is then part of the name.
    if (bundle.importMap) args.push(`--import-map=${pathToFileURL(join(dir, bundle.importMap)).href}`);
    args.push(pathToFileURL(join(dir, bundle.entry)).href);
    const { code, stdout, stderr } = await run(
      denoBin,
      args,
      {
        ...networkEnv,
        DENO_DIR: denoDir,
        DENO_NO_UPDATE_CHECK: '1',
        DENO_TLS_CA_STORE: 'system',
        NO_COLOR: '1',
        PATH: '',
      },
      dir,
    );
    let modules: InfoModule[] = [];
    try {
      modules = (JSON.parse(stdout) as { modules?: InfoModule[] }).modules ?? [];
    } catch {
      throw new UnresolvedImportError(scrub(stderr, dir) || 'the module graph could not be loaded');
    }
    const failed = firstFailure(modules);
    if (failed) {
      const specifier = scrub(failed.specifier, dir);
      throw new UnresolvedImportError(`cannot resolve import "${specifier}": ${scrub(failed.error, dir)}`);
    }
    if (code !== 0)
      throw new UnresolvedImportError(scrub(stderr, dir) || 'the module graph could not be loaded');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
