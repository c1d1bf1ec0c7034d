/**
 * The temp-space watcher's measure (worker-sandbox.ts folderUsage): the file system's own blocks
 * do not count. A file written while another file grows beside it ends up in several extents, and
 * ext4 then allocates an extent-tree block for it: st_blocks is one block over its size, and a
 * file of exactly the per-file limit counted as over the folder's limit (the worker was killed,
 * 546, in CI while other tests wrote large files).
 */
import {
  closeSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { folderUsage } from '../../src/functions/worker-sandbox.js';

const MIB = 1024 * 1024;
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'strata-usage-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Two files of `size` written 64 KiB at a time in turn, each write synced: fragmented. */
function interleaved(a: string, b: string, size: number): void {
  const fa = openSync(a, 'w');
  const fb = openSync(b, 'w');
  const chunk = Buffer.alloc(64 * 1024, 7);
  try {
    for (let n = 0; n < size; n += chunk.length) {
      writeSync(fa, chunk);
      fsyncSync(fa);
      writeSync(fb, chunk);
      fsyncSync(fb);
    }
  } finally {
    closeSync(fa);
    closeSync(fb);
  }
}

describe('folderUsage', () => {
  it('a file of exactly N bytes counts N, even when the file system spent a block of its own on it', () => {
    const a = join(dir, 'a');
    const other = mkdtempSync(join(tmpdir(), 'strata-usage-other-'));
    try {
      interleaved(a, join(other, 'b'), 32 * MIB);
      // (On ext4 here: 5 extents, st_blocks one 4 KiB block over the size.)
      expect(statSync(a).blocks * 512).toBeGreaterThanOrEqual(32 * MIB);
      expect(folderUsage(dir, 64 * MIB)).toBe(32 * MIB);
      expect(folderUsage(dir, 32 * MIB) > 32 * MIB).toBe(false);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('a sparse file counts the blocks it uses; a small file and a folder count a block each', () => {
    const sparse = join(dir, 'sparse');
    closeSync(openSync(sparse, 'w'));
    truncateSync(sparse, 1024 * MIB);
    expect(folderUsage(dir, 2048 * MIB)).toBe(4096);
    const small = join(dir, 'small');
    const fd = openSync(small, 'w');
    writeSync(fd, 'x');
    closeSync(fd);
    const sub = mkdtempSync(join(dir, 'sub-'));
    expect(folderUsage(dir, 2048 * MIB)).toBe(4096 + 4096 + Math.max(statSync(sub).blocks * 512, 4096));
  });

  it('stops counting once over the bound', () => {
    for (let i = 0; i < 10; i++) closeSync(openSync(join(dir, `f${i}`), 'w'));
    expect(folderUsage(dir, 8192)).toBe(12288);
  });
});
