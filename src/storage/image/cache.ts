/**
 * Rendered variants in memory, bounded in bytes (LRU). A variant is keyed by the object's version
 * (every write of an object gets a fresh version) plus the normalised options and output format,
 * so a changed object can never be answered from an old render; when a render sees a newer version
 * of an object, the variants of its other versions are dropped at once instead of aging out.
 * Identical renders in flight are shared.
 */
import { LRUCache } from 'lru-cache';
import type { Rendered } from './transform.js';

export interface VariantKey {
  /** Project ref, bucket and key: one object. */
  object: string;
  version: string;
  /** Normalised options + output format. */
  variant: string;
}

export class VariantCache {
  private readonly lru?: LRUCache<string, Rendered>;
  /** object → its version seen last and the cache keys stored for it. */
  private readonly byObject = new Map<string, { version: string; keys: Set<string> }>();
  private readonly inFlight = new Map<string, Promise<Rendered>>();
  hits = 0;
  misses = 0;

  constructor(maxBytes: number) {
    if (maxBytes > 0) {
      this.lru = new LRUCache<string, Rendered>({
        maxSize: maxBytes,
        sizeCalculation: (v) => Math.max(1, v.body.length),
        dispose: (_v, key) => this.forget(key),
      });
    }
  }

  private static keyOf(k: VariantKey): string {
    return `${k.object}\u0000${k.version}\u0000${k.variant}`;
  }

  private forget(key: string): void {
    const object = key.slice(0, key.indexOf('\u0000'));
    const entry = this.byObject.get(object);
    if (!entry) return;
    entry.keys.delete(key);
    if (entry.keys.size === 0) this.byObject.delete(object);
  }

  /** Drops every variant of `object` not at `version`. */
  private invalidateOthers(object: string, version: string): void {
    const entry = this.byObject.get(object);
    if (!entry || entry.version === version) return;
    for (const key of [...entry.keys]) this.lru?.delete(key);
    this.byObject.delete(object);
  }

  /** The cached variant, or `render()`'s result (stored); `hit` tells which. */
  async get(k: VariantKey, render: () => Promise<Rendered>): Promise<{ rendered: Rendered; hit: boolean }> {
    this.invalidateOthers(k.object, k.version);
    const key = VariantCache.keyOf(k);
    const cached = this.lru?.get(key);
    if (cached) {
      this.hits++;
      return { rendered: cached, hit: true };
    }
    const pending = this.inFlight.get(key);
    if (pending !== undefined) {
      this.hits++;
      return { rendered: await pending, hit: true };
    }
    this.misses++;
    const p = render();
    this.inFlight.set(key, p);
    try {
      const rendered = await p;
      if (this.lru) {
        this.lru.set(key, rendered);
        if (this.lru.has(key)) {
          const entry = this.byObject.get(k.object);
          if (entry && entry.version === k.version) entry.keys.add(key);
          else this.byObject.set(k.object, { version: k.version, keys: new Set([key]) });
        }
      }
      return { rendered, hit: false };
    } finally {
      this.inFlight.delete(key);
    }
  }

  get size(): number {
    return this.lru?.calculatedSize ?? 0;
  }
}
