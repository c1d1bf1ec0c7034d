/**
 * Where object bytes live. Every write goes to a fresh version, so an object's current bytes are
 * never overwritten in place; the service decides which version is current (the database row).
 */
import type { Readable } from 'node:stream';

/** One stored version of one object. */
export interface ObjectLocation {
  bucket: string;
  key: string;
  version: string;
}

export interface StoredObject {
  /** Quoted, e.g. "\"9e107d9d372bb6826bd81d3542a419d6\"". */
  eTag: string;
  size: number;
  lastModified: Date;
}

export interface PutOptions {
  contentType: string;
  cacheControl: string;
  /** The stream is cut and the put fails with `limitError()` past this many bytes. */
  maxBytes: number;
  /** Thrown when the body exceeds maxBytes. */
  limitError: () => Error;
  /** Aborts the write (client went away). */
  signal?: AbortSignal;
}

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

/** What a reconciliation pass (src/storage/reconcile.ts) may remove, and how it asks. */
export interface SweepOptions {
  /** Only leftovers last touched before this instant (ms since the epoch) are candidates. */
  before: number;
  /**
   * Removes each version that no committed row references, by calling `remove` while holding the
   * key's commit lock (so a commit cannot slip in between the check and the removal); returns how
   * many went.
   */
  removeUnreferenced(
    candidates: ObjectLocation[],
    remove: (loc: ObjectLocation) => Promise<void>,
  ): Promise<number>;
}

export interface SweepReport {
  tempFiles: number;
  orphans: number;
  folders: number;
}

export interface StorageBackend {
  readonly kind: 'file' | 's3';
  /** Stores the stream; nothing is left behind if it fails. */
  put(loc: ObjectLocation, body: Readable, opts: PutOptions): Promise<StoredObject>;
  /** A stream of the bytes (or of a range); undefined when the version is missing. */
  get(loc: ObjectLocation, range?: ByteRange): Promise<Readable | undefined>;
  copy(
    from: ObjectLocation,
    to: ObjectLocation,
    opts: { contentType: string; cacheControl: string },
  ): Promise<StoredObject>;
  /**
   * Whether the version's bytes are present, asked under the key's commit lock just before a row is
   * pointed at them (a sweep removes unreferenced bytes under the same lock). Backends without a
   * cheap answer leave it out and rely on the sweep's grace period.
   */
  has?(loc: ObjectLocation): Promise<boolean>;
  /** Deletes versions; missing ones are ignored. */
  delete(locs: ObjectLocation[]): Promise<void>;
  /** Removes leftovers of interrupted writes: temporary files, unreferenced versions, empty folders. */
  sweep(opts: SweepOptions): Promise<SweepReport>;
  close(): Promise<void>;
}

/** An object version as the backends name it: a UUID. */
export const VERSION = /^[0-9a-f-]{36}$/;
