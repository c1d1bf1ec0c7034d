/**
 * Copying the build's Deno seed into a data folder's Deno cache (src/functions/deno-seed.ts): what
 * the cache lacks is added, readable by the workers' user; what it has is never replaced; no
 * temporary names are left; no seed (or `off`) copies nothing.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seedDenoDir } from '../../src/functions/deno-seed.js';

const base = mkdtempSync(join(tmpdir(), 'strata-deno-seed-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function write(path: string, text: string, mode = 0o600): void {
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
  writeFileSync(path, text, { mode });
}

function all(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

describe('seedDenoDir', () => {
  it('adds what is missing, keeps what is there, leaves no temporary names', async () => {
    const seed = join(base, 'seed');
    const reg = join(seed, 'npm', 'registry.npmjs.org');
    write(join(reg, 'jose', 'registry.json'), 'seed jose doc');
    write(join(reg, 'jose', '6.2.18', 'package.json'), 'seed jose 6');
    write(join(reg, '@supabase', 'server', 'registry.json'), 'seed server doc');
    write(join(reg, '@supabase', 'server', '1.8.1', 'dist', 'index.js'), 'seed server 1');
    write(join(seed, 'seed.json'), '{}');

    const denoDir = join(base, 'deno-dir');
    const have = join(denoDir, 'npm', 'registry.npmjs.org');
    write(join(have, 'jose', 'registry.json'), 'own jose doc');
    write(join(have, '@supabase', 'server', '1.8.1', 'package.json'), 'own server 1');

    const copied = await seedDenoDir(seed, denoDir);
    // jose/6.2.18/, @supabase/server/registry.json and @supabase/server/1.8.1/dist/.
    expect(copied).toBe(3);
    expect(readFileSync(join(have, 'jose', 'registry.json'), 'utf8')).toBe('own jose doc');
    expect(readFileSync(join(have, 'jose', '6.2.18', 'package.json'), 'utf8')).toBe('seed jose 6');
    expect(readFileSync(join(have, '@supabase', 'server', 'registry.json'), 'utf8')).toBe('seed server doc');
    // An existing package folder is filled in file by file, never replaced.
    expect(readFileSync(join(have, '@supabase', 'server', '1.8.1', 'package.json'), 'utf8')).toBe(
      'own server 1',
    );
    expect(readFileSync(join(have, '@supabase', 'server', '1.8.1', 'dist', 'index.js'), 'utf8')).toBe(
      'seed server 1',
    );
    // Only the npm part of the seed; nothing under a temporary name.
    expect(readdirSync(denoDir)).toEqual(['npm']);
    expect(all(denoDir).filter((p) => p.includes('.strata-seed-'))).toEqual([]);
    // Readable (files) and searchable (folders) by others: the workers run as `nobody` under root.
    expect(statSync(join(have, 'jose', '6.2.18', 'package.json')).mode & 0o004).toBe(0o004);
    expect(statSync(join(have, 'jose', '6.2.18')).mode & 0o005).toBe(0o005);
    expect(statSync(join(have, '@supabase', 'server', 'registry.json')).mode & 0o004).toBe(0o004);

    const before = all(denoDir);
    expect(await seedDenoDir(seed, denoDir)).toBe(0);
    expect(all(denoDir)).toEqual(before);
  });

  it('copies nothing without a seed', async () => {
    const denoDir = join(base, 'empty');
    mkdirSync(denoDir);
    expect(await seedDenoDir(undefined, denoDir)).toBe(0);
    expect(await seedDenoDir(join(base, 'no-such-seed'), denoDir)).toBe(0);
    expect(readdirSync(denoDir)).toEqual([]);
  });
});
