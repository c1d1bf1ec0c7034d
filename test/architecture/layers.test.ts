/**
 * The source's layers, low to high: config.ts, db/, auth/, platform/; then graphql/, storage/,
 * functions/, realtime/; then management/, console/; then server.ts, services.ts, cli.ts, index.ts. A module
 * imports only from its own layer or lower ones: this test reads every import specifier of
 * src/**\/*.ts (a regex, no parser) and names each import that goes up.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');

/** Rank of each top-level entry of src/ (a folder or a file); higher may import lower, not the reverse. */
const RANK: Record<string, number> = {
  'config.ts': 0,
  db: 1,
  auth: 2,
  platform: 3,
  graphql: 4,
  storage: 4,
  functions: 4,
  realtime: 4,
  management: 5,
  console: 5,
  'server.ts': 6,
  'cli.ts': 6,
  'index.ts': 6,
  // How server.ts composes the platform and its services.
  'services.ts': 6,
};

/** Known upward imports, `from -> to` (paths under src/, .ts): none. A new one needs a reason here. */
const ALLOWED = new Set<string>([]);

/** `from '…'`, `import '…'`, `import('…')` and `export … from '…'`, relative specifiers only. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

function sourceFiles(): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split('\\').join('/'))
    .sort();
}

function rankOf(path: string): number | undefined {
  return RANK[path.split('/', 1)[0] ?? ''];
}

/** Every import that goes from a lower layer to a higher one, as `from -> to`. */
function upwardImports(): string[] {
  const found: string[] = [];
  for (const file of sourceFiles()) {
    const text = readFileSync(join(SRC, file), 'utf8');
    const from = rankOf(file);
    for (const m of text.matchAll(SPECIFIER)) {
      const spec = m[1] ?? '';
      const target = relative(SRC, resolve(SRC, dirname(file), spec))
        .split('\\')
        .join('/')
        .replace(/\.js$/, '.ts');
      const to = rankOf(target);
      if (from !== undefined && to !== undefined && to > from) found.push(`${file} -> ${target}`);
    }
  }
  return [...new Set(found)];
}

describe('source layers', () => {
  it('every top-level entry of src/ has a layer', () => {
    const tops = new Set(sourceFiles().map((f) => f.split('/', 1)[0] ?? ''));
    expect([...tops].filter((t) => RANK[t] === undefined)).toEqual([]);
  });

  it('no module imports from a layer above its own', () => {
    const offenders = upwardImports().filter((i) => !ALLOWED.has(i));
    if (offenders.length > 0)
      console.error(`Upward imports (${offenders.length}):\n${offenders.map((o) => `  ${o}`).join('\n')}`);
    expect(offenders).toEqual([]);
  });

  it('every allowed upward import still exists (drop the ones that are gone)', () => {
    const all = new Set(upwardImports());
    expect([...ALLOWED].filter((a) => !all.has(a))).toEqual([]);
  });
});
