/**
 * Keeps the garbage of request bodies from piling up in resident memory. Node's HTTP parser hands
 * each piece of a body (up to 64 KiB) over in a fresh buffer, which V8 counts as external memory;
 * V8 collects them only when the young generation fills up or external memory has grown by its
 * soft limit (64 MiB) since the last collection, so a large upload held ~30 MiB of dead buffers
 * (resident: their memory is only freed by a collection) on top of the process's base. Asking for
 * a young-generation collection (a scavenge) every BYTES_PER_COLLECTION bytes of bodies bounds
 * that: the young generation holds little live data during an upload, so a scavenge costs about a
 * millisecond per 4 MiB (the storage bench's upload CPU per GiB shows it). The count is
 * process-wide, as the heap is (the collector: platform/heap-gc.ts).
 */
import { collector } from '../../platform/heap-gc.js';

/** Bytes of bodies between two requested collections. */
const BYTES_PER_COLLECTION = 4 * 1024 * 1024;

let since = 0;

/** Counts body bytes that became garbage (or will, once written); collects every few MiB. */
export function bodyBytesPassed(n: number): void {
  since += n;
  if (since < BYTES_PER_COLLECTION) return;
  since = 0;
  collector()?.({ type: 'minor', execution: 'sync' });
}
