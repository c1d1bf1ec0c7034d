/** HeapPacer (src/platform/heap-gc.ts): an asynchronous major collection once the old generation grew. */
import { describe, expect, it } from 'vitest';
import { collector, HeapPacer, oldGenerationUsed as oldUsed } from '../../src/platform/heap-gc.js';

const MiB = 1024 * 1024;

describe('heap pacing', () => {
  it('asks for a collection only after the old generation grew by its step, and at most once per interval', async () => {
    const gc = collector();
    expect(gc).not.toBeNull();
    // What earlier files in this worker left is collected first: the floor is what lives.
    gc?.({ type: 'major', execution: 'sync' });
    const pacer = new HeapPacer(8 * MiB, 500);
    const t0 = 1_000_000;
    // The first look sets the floor: nothing to collect yet.
    expect(pacer.check(t0)).toBe(false);
    // Large arrays go to the large-object space (the old generation) at once.
    let held: number[][] = [];
    for (let i = 0; i < 32; i++) held.push(new Array(128 * 1024).fill(i));
    expect(oldUsed()).toBeGreaterThan(8 * MiB);
    expect(pacer.check(t0 + 1)).toBe(true);
    // Within the interval: not again, however much more there is.
    for (let i = 0; i < 16; i++) held.push(new Array(128 * 1024).fill(i));
    expect(pacer.check(t0 + 100)).toBe(false);
    held = [];
    expect(held).toHaveLength(0);
  });
});
