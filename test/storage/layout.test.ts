/**
 * Where storage code keeps its SQL and its operation names: every statement in src/storage/database/
 * (the storage SQL adapter), every operation name in src/storage/operations.ts (`OPERATIONS`).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/storage/operations.js';

const root = join(import.meta.dirname, '../../src/storage');

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

const rel = (p: string) => relative(root, p).split('\\').join('/');

describe('storage source layout', () => {
  it('runs queries only in database/', () => {
    const offenders = sources(root)
      .filter((p) => !rel(p).startsWith('database/'))
      .filter((p) => /\.query\s*(<[^>]*>)?\s*\(/.test(readFileSync(p, 'utf8')))
      .map(rel);
    expect(offenders).toEqual([]);
  });

  it('names operations only through OPERATIONS', () => {
    const values = new Set<string>(Object.values(OPERATIONS));
    const offenders: string[] = [];
    for (const p of sources(root)) {
      if (rel(p) === 'operations.ts') continue;
      for (const m of readFileSync(p, 'utf8').matchAll(/['"`]([a-z0-9_.]+)['"`]/g))
        if (m[1] && values.has(m[1])) offenders.push(`${rel(p)}: ${m[1]}`);
    }
    expect(offenders).toEqual([]);
  });

  it('gives every operation its own name', () => {
    const names = Object.values(OPERATIONS);
    expect(new Set(names).size).toBe(names.length);
  });
});
