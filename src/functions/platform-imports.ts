/**
 * Imports the platform satisfies itself, for the deploy check (import-check.ts) and the workers
 * (function-catalog.ts): the Supabase CLI's function template starts with the type-only
 * `import "@supabase/functions-js/edge-runtime.d.ts"` (older templates: the `jsr:` and esm.sh
 * forms), which would otherwise need jsr.io at deploy time and, offline, could never load. Those
 * specifiers map to an empty local `.d.ts` (types only: nothing runs either way).
 *
 * The function's own import map stays as uploaded; the platform writes, next to it, a map with its
 * `imports` and `scopes` plus the entries above (an entry the function maps itself is left alone).
 * A `deno.json` is read as Deno reads a config file: `"pkg": "jsr:pkg@1"` also maps `pkg/…`
 * (subpath imports such as `@supabase/functions-js/edge-runtime.d.ts`), as the hosted bundler does.
 * A map that is not a JSON object is left to Deno, which reports it.
 */
import { posix } from 'node:path';
import type { Bundle } from './bundle-files.js';

/** Folder (next to the function's import map, or its entrypoint) holding the platform's types file. */
const PLATFORM_DIR = '.strata';
const TYPES_FILE = `${PLATFORM_DIR}/edge-runtime.d.ts`;
/** In the same folder as the function's map, so that its relative addresses mean the same. */
const MAP_FILE = '.strata-import-map.json';

const TYPES_SOURCE = Buffer.from(
  '// Supabase Edge Runtime types, satisfied by Strata: a type-only module, empty at run time.\nexport {};\n',
);

/** Specifiers of the Edge Runtime's type declarations, as the CLI's templates have written them. */
export const EDGE_RUNTIME_TYPES = [
  '@supabase/functions-js/edge-runtime.d.ts',
  'jsr:@supabase/functions-js/edge-runtime.d.ts',
  'https://esm.sh/@supabase/functions-js/src/edge-runtime.d.ts',
];

interface ImportMap {
  imports: Record<string, string>;
  scopes?: Record<string, Record<string, string>>;
}

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v && typeof v === 'object' && !Array.isArray(v))
    for (const [k, val] of Object.entries(v)) if (typeof val === 'string') out[k] = val;
  return out;
}

/** The function's map as JSON, or undefined when it is not a JSON object (Deno then reports it). */
function parseMap(bytes: Buffer): ImportMap | undefined {
  try {
    const v = JSON.parse(bytes.toString('utf8')) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
    const o = v as Record<string, unknown>;
    const scopes: Record<string, Record<string, string>> = {};
    if (o.scopes && typeof o.scopes === 'object' && !Array.isArray(o.scopes))
      for (const [k, val] of Object.entries(o.scopes)) scopes[k] = stringMap(val);
    return { imports: stringMap(o.imports), scopes };
  } catch {
    return undefined;
  }
}

/** Deno's config-file rule: `"name": "jsr:name@1"` also maps `name/` to `jsr:/name@1/` (same for npm:). */
function expandConfigImports(imports: Record<string, string>): Record<string, string> {
  const out = { ...imports };
  for (const [key, value] of Object.entries(imports)) {
    if (key.endsWith('/')) continue;
    const m = /^(jsr|npm):\/?(.+)$/.exec(value);
    if (!m || `${key}/` in out) continue;
    out[`${key}/`] = `${m[1]}:/${(m[2] as string).replace(/\/$/, '')}/`;
  }
  return out;
}

/**
 * The bundle as the platform runs it: the same files plus the platform's (next to the import map
 * or entrypoint; a function's own file of either name is never replaced: then nothing is added), and
 * `importMap` naming the platform's map. `added` lists the platform's files.
 */
export function withPlatformImports(bundle: Bundle): { bundle: Bundle; added: string[] } {
  let own: ImportMap = { imports: {} };
  if (bundle.importMap) {
    const parsed = parseMap(bundle.files.get(bundle.importMap) ?? Buffer.alloc(0));
    if (!parsed) return { bundle, added: [] };
    own = parsed;
    if (/^deno\.jsonc?$/.test(posix.basename(bundle.importMap)))
      own.imports = expandConfigImports(own.imports);
  }
  const base = posix.dirname(bundle.importMap ?? bundle.entry);
  const at = (rel: string) => (base === '.' ? rel : `${base}/${rel}`);
  const typesPath = at(TYPES_FILE);
  const mapPath = at(MAP_FILE);
  if ([typesPath, mapPath, at(PLATFORM_DIR)].some((p) => bundle.files.has(p))) return { bundle, added: [] };
  const imports = { ...own.imports };
  for (const spec of EDGE_RUNTIME_TYPES) if (!(spec in imports)) imports[spec] = `./${TYPES_FILE}`;
  const map: ImportMap = { imports };
  if (own.scopes && Object.keys(own.scopes).length > 0) map.scopes = own.scopes;
  const files = new Map(bundle.files);
  files.set(typesPath, TYPES_SOURCE);
  files.set(mapPath, Buffer.from(`${JSON.stringify(map, null, 2)}\n`));
  return { bundle: { files, entry: bundle.entry, importMap: mapPath }, added: [typesPath, mapPath] };
}
