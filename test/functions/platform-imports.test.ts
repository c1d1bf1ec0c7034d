/**
 * The import map the platform runs a function with (src/functions/platform-imports.ts): the
 * function's own entries, deno.json's jsr:/npm: entries expanded to subpaths as Deno's config does,
 * and the Edge Runtime's types module mapped to a local file unless the function maps it.
 */
import { describe, expect, it } from 'vitest';
import type { Bundle } from '../../src/functions/bundle-files.js';
import { EDGE_RUNTIME_TYPES, withPlatformImports } from '../../src/functions/platform-imports.js';

const dir = 'supabase/functions/hello';
const bundleOf = (files: Record<string, string>, importMap?: string): Bundle => ({
  files: new Map(Object.entries(files).map(([k, v]) => [k, Buffer.from(v)])),
  entry: `${dir}/index.ts`,
  importMap,
});
const mapOf = (b: Bundle) => JSON.parse((b.files.get(b.importMap as string) as Buffer).toString());

describe('withPlatformImports', () => {
  it("adds the types module and the platform's map next to deno.json, expanding jsr:/npm: entries", () => {
    const { bundle, added } = withPlatformImports(
      bundleOf(
        {
          [`${dir}/index.ts`]: '',
          [`${dir}/deno.json`]: JSON.stringify({
            imports: {
              '@supabase/functions-js': 'jsr:@supabase/functions-js@^2',
              '@supabase/server': 'npm:@supabase/server@^1',
              '@/': './lib/',
            },
            scopes: { './lib/': { x: './x.ts' } },
            compilerOptions: { strict: true },
          }),
        },
        `${dir}/deno.json`,
      ),
    );
    expect(added).toEqual([`${dir}/.strata/edge-runtime.d.ts`, `${dir}/.strata-import-map.json`]);
    expect(bundle.importMap).toBe(`${dir}/.strata-import-map.json`);
    expect(bundle.files.get(`${dir}/deno.json`)).toBeDefined();
    const map = mapOf(bundle);
    expect(map.imports).toMatchObject({
      '@supabase/functions-js': 'jsr:@supabase/functions-js@^2',
      '@supabase/functions-js/': 'jsr:/@supabase/functions-js@^2/',
      '@supabase/server/': 'npm:/@supabase/server@^1/',
      '@/': './lib/',
    });
    for (const spec of EDGE_RUNTIME_TYPES) expect(map.imports[spec]).toBe('./.strata/edge-runtime.d.ts');
    expect(map.scopes).toEqual({ './lib/': { x: './x.ts' } });
  });

  it('import_map.json is an import map (no expansion); the function keeps its own mapping', () => {
    const { bundle } = withPlatformImports(
      bundleOf(
        {
          [`${dir}/index.ts`]: '',
          'supabase/functions/import_map.json': JSON.stringify({
            imports: { a: 'jsr:@x/a@1', '@supabase/functions-js/edge-runtime.d.ts': './mine.ts' },
          }),
        },
        'supabase/functions/import_map.json',
      ),
    );
    const map = mapOf(bundle);
    expect(bundle.importMap).toBe('supabase/functions/.strata-import-map.json');
    expect(map.imports['a/']).toBeUndefined();
    expect(map.imports['@supabase/functions-js/edge-runtime.d.ts']).toBe('./mine.ts');
    expect(map.imports['jsr:@supabase/functions-js/edge-runtime.d.ts']).toBe('./.strata/edge-runtime.d.ts');
  });

  it('without an import map: one next to the entrypoint', () => {
    const { bundle } = withPlatformImports(bundleOf({ [`${dir}/index.ts`]: '' }));
    expect(bundle.importMap).toBe(`${dir}/.strata-import-map.json`);
    expect(bundle.files.has(`${dir}/.strata/edge-runtime.d.ts`)).toBe(true);
  });

  it("leaves alone a map that is not JSON, and a function's own files of the platform's names", () => {
    const bad = bundleOf(
      { [`${dir}/index.ts`]: '', [`${dir}/deno.json`]: '{ // comment' },
      `${dir}/deno.json`,
    );
    expect(withPlatformImports(bad)).toEqual({ bundle: bad, added: [] });
    for (const own of [
      `${dir}/.strata-import-map.json`,
      `${dir}/.strata`,
      `${dir}/.strata/edge-runtime.d.ts`,
    ]) {
      const b = bundleOf({ [`${dir}/index.ts`]: '', [own]: '{}' });
      expect(withPlatformImports(b)).toEqual({ bundle: b, added: [] });
    }
  });
});
