/**
 * Asking V8 for a collection from the process itself. `gc` is not on the global object: the
 * `--expose-gc` flag, set at run time, installs it in contexts made afterwards, and one such
 * context is made here, on the first use, for this alone. Node 20's `gc` takes `{ type, execution }`:
 * a minor collection (a scavenge of the young generation), or a major one that runs `async`
 * (incremental marking alongside the program, as V8's own major collections do) rather than as
 * one pause.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export type Gc = (options: { type: 'minor' | 'major'; execution: 'sync' | 'async' }) => void;

let gc: Gc | null | undefined;

/** The collector, or null where it cannot be had. */
export function collector(): Gc | null {
  if (gc !== undefined) return gc;
  try {
    setFlagsFromString('--expose-gc');
    const fn: unknown = runInNewContext('typeof gc === "function" ? gc : undefined');
    gc = typeof fn === 'function' ? (fn as Gc) : null;
  } catch {
    gc = null;
  }
  return gc;
}

/**
 * Keeps garbage from piling up in the old generation of a process that makes a lot of medium-lived
 * objects (live-query results: kept until the next change, then garbage). V8 starts a major
 * collection when the old generation has grown by a factor since the last one, so the dead results
 * of a busy minute sat in resident memory (a 10,000-live-query bench peaked at 440 MiB over 44 MiB
 * of live heap). `check()` after each burst of work asks for an asynchronous major collection once
 * the old generation (old and large-object spaces: the young one is bounded and scavenged anyway)
 * holds `growth` bytes more than the least it was seen holding since the last request, at most
 * once per `minIntervalMs`.
 */
export class HeapPacer {
  private low = Number.POSITIVE_INFINITY;
  private lastAt = 0;

  constructor(
    private readonly growth = 56 * 1024 * 1024,
    private readonly minIntervalMs = 2000,
  ) {}

  /** Answers whether a collection was asked for. */
  check(now = Date.now()): boolean {
    if (now - this.lastAt < this.minIntervalMs) return false;
    const used = oldGenerationUsed();
    if (used < this.low) this.low = used;
    if (used - this.low < this.growth) return false;
    const gc = collector();
    if (!gc) return false;
    this.lastAt = now;
    this.low = used;
    gc({ type: 'major', execution: 'async' });
    return true;
  }
}

/** Bytes used in the old and large-object spaces. */
export function oldGenerationUsed(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics())
    if (space.space_name === 'old_space' || space.space_name === 'large_object_space')
      used += space.space_used_size;
  return used;
}
