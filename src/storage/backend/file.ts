/**
 * File-system backend: `<root>/buckets/<bucket>/<key segments>/~<version>`. Writes go to
 * `<root>/.tmp/<uuid>` and are renamed into place, so a failed or aborted write leaves nothing (and
 * a crashed one leaves only a temporary file, which `sweep` removes). Every path is resolved and
 * checked to stay inside its bucket directory. The `~` of the version leaf cannot occur in a key, so
 * a version file never collides with a key's directory; empty, `.` and `..` key segments are
 * written `%`, `%.`, `%..` (key-segments.ts), so they name their own directories.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readdir, rename, rmdir, stat, unlink } from 'node:fs/promises';
import { join, resolve, sep, dirname } from 'node:path';
import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { FileBody } from './file-body.js';
import { MeteredStream, STREAM_BUFFER, digestStream } from './metered-stream.js';
import type {
  ByteRange,
  ObjectLocation,
  PutOptions,
  StorageBackend,
  StoredObject,
  SweepOptions,
  SweepReport,
} from './interface.js';
import { VERSION } from './interface.js';
import { fileSegment, keySegmentOfFile } from './key-segments.js';

const VERSION_LEAF = /^~([0-9a-f-]{36})$/;
/** Reads of whole files go in chunks this large. */
const READ_CHUNK = 1024 * 1024;
/** Unreferenced versions are checked against the database this many at a time. */
const SWEEP_BATCH = 256;

/** fsync of a file (or, opened read-only, of a directory's entries). */
async function syncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export interface FileBackendOptions {
  /**
   * Uploaded bytes (and the directory entry that publishes them) are fsynced before the row that
   * points at them is committed, so an acknowledged upload survives a crash. Off: faster large
   * uploads, for disposable data.
   */
  fsync: boolean;
  /** The ETag: MD5 of the bytes, or (no hashing) `"<mtime ms hex>-<size hex>"` as the reference's `mtime`. */
  eTag: 'md5' | 'mtime';
}

/** The reference's `mtime` ETag: modification time (ms) and size, in hex. */
function mtimeETag(s: { mtimeMs: number; size: number }): string {
  return `"${s.mtimeMs.toString(16)}-${s.size.toString(16)}"`;
}

export class FileBackend implements StorageBackend {
  readonly kind = 'file' as const;
  private readonly objectsRoot: string;
  private readonly tmpRoot: string;
  /** Temporary files of writes in progress in this process: never swept. */
  private readonly active = new Set<string>();

  constructor(
    root: string,
    private readonly opts: FileBackendOptions = { fsync: true, eTag: 'md5' },
  ) {
    this.objectsRoot = resolve(root, 'buckets');
    this.tmpRoot = resolve(root, '.tmp');
  }

  private bucketDir(bucket: string): string {
    const dir = resolve(this.objectsRoot, bucket);
    if (dirname(dir) !== this.objectsRoot) throw new Error('bucket escapes the storage root');
    return dir;
  }

  /** The file of one version; throws if the key would leave the bucket directory. */
  pathOf(loc: ObjectLocation): string {
    if (!VERSION.test(loc.version)) throw new Error('invalid version');
    const dir = this.bucketDir(loc.bucket);
    const p = resolve(dir, ...loc.key.split('/').map(fileSegment), `~${loc.version}`);
    if (!p.startsWith(dir + sep)) throw new Error('key escapes the bucket directory');
    return p;
  }

  async put(loc: ObjectLocation, body: Readable, opts: PutOptions): Promise<StoredObject> {
    return this.writeVersion(
      body,
      this.pathOf(loc),
      new MeteredStream(opts.maxBytes, opts.limitError, { hash: this.opts.eTag === 'md5' }),
      opts.signal,
    );
  }

  /** Streams `source` to a temporary file, fsyncs it and renames it to `target`; nothing is left on failure. */
  private async writeVersion(
    source: Readable,
    target: string,
    meter: MeteredStream,
    signal?: AbortSignal,
  ): Promise<StoredObject> {
    await mkdir(this.tmpRoot, { recursive: true });
    const tmp = join(this.tmpRoot, randomUUID());
    this.active.add(tmp);
    let eTag: string | undefined;
    try {
      await pipeline(
        source,
        meter,
        createWriteStream(tmp, { flags: 'wx', highWaterMark: STREAM_BUFFER }),
        signal ? { signal } : {},
      );
      // The worker finishes the hash while the file is fsynced.
      const digest = this.opts.eTag === 'md5' ? meter.eTag() : undefined;
      digest?.catch(() => {});
      if (this.opts.fsync) await syncPath(tmp);
      eTag = await digest;
      await this.moveIntoPlace(tmp, target);
      if (this.opts.fsync) await syncPath(dirname(target));
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    } finally {
      this.active.delete(tmp);
    }
    const s = await stat(target);
    return { eTag: eTag ?? mtimeETag(s), size: meter.bytes, lastModified: s.mtime };
  }

  /**
   * Takes a finished file on the same file system (a completed resumable upload, already fsynced)
   * as the version's bytes: reads it once for the MD5 ETag and size, then renames it into place.
   * Past `maxBytes` the file is left where it was and the limit error thrown.
   */
  async adoptFile(
    source: string,
    loc: ObjectLocation,
    opts: Pick<PutOptions, 'maxBytes' | 'limitError'>,
  ): Promise<StoredObject> {
    const target = this.pathOf(loc);
    if (this.opts.eTag === 'mtime') {
      const size = (await stat(source)).size;
      if (size > opts.maxBytes) throw opts.limitError();
      await this.moveIntoPlace(source, target);
      if (this.opts.fsync) await syncPath(dirname(target));
      const s = await stat(target);
      return { eTag: mtimeETag(s), size, lastModified: s.mtime };
    }
    const { eTag, size } = await digestStream(
      createReadStream(source, { highWaterMark: READ_CHUNK }),
      opts.maxBytes,
      opts.limitError,
    );
    await this.moveIntoPlace(source, target);
    if (this.opts.fsync) await syncPath(dirname(target));
    const s = await stat(target);
    return { eTag, size, lastModified: s.mtime };
  }

  /** rename, retrying when a concurrent delete pruned the freshly made parent directory. */
  private async moveIntoPlace(tmp: string, target: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      await mkdir(dirname(target), { recursive: true });
      try {
        await rename(tmp, target);
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw err;
      }
    }
  }

  async get(loc: ObjectLocation, range?: ByteRange): Promise<Readable | undefined> {
    let fh: FileHandle;
    try {
      fh = await open(this.pathOf(loc), 'r');
    } catch (err) {
      if (
        (err as NodeJS.ErrnoException).code === 'ENOENT' ||
        (err as NodeJS.ErrnoException).code === 'ENOTDIR'
      )
        return undefined;
      throw err;
    }
    try {
      const last = range ? range.end : (await fh.stat()).size - 1;
      return new FileBody(fh, range ? range.start : 0, last);
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  async copy(from: ObjectLocation, to: ObjectLocation): Promise<StoredObject> {
    const src = this.pathOf(from);
    const target = this.pathOf(to);
    return this.writeVersion(
      createReadStream(src),
      target,
      new MeteredStream(Number.MAX_SAFE_INTEGER, () => new Error('unreachable'), {
        hash: this.opts.eTag === 'md5',
      }),
    );
  }

  async has(loc: ObjectLocation): Promise<boolean> {
    return stat(this.pathOf(loc)).then(
      () => true,
      (err) => {
        if (isMissing(err)) return false;
        throw err;
      },
    );
  }

  async delete(locs: ObjectLocation[]): Promise<void> {
    for (const loc of locs) {
      const p = this.pathOf(loc);
      await unlink(p).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT' && err.code !== 'ENOTDIR') throw err;
      });
      await this.prune(dirname(p), this.objectsRoot);
    }
  }

  /** Removes empty directories from `dir` up to (not including) `stop`; the bucket's own goes too. */
  private async prune(dir: string, stop: string): Promise<void> {
    while (dir.startsWith(stop + sep)) {
      try {
        await rmdir(dir);
      } catch {
        return;
      }
      dir = dirname(dir);
    }
  }

  async sweep(opts: SweepOptions): Promise<SweepReport> {
    const report: SweepReport = { tempFiles: 0, orphans: 0, folders: 0 };
    // 1. Temporary files of writes that never finished (crash, or a stalled client).
    for (const name of await readdir(this.tmpRoot).catch(() => [] as string[])) {
      const p = join(this.tmpRoot, name);
      if (this.active.has(p)) continue;
      const s = await lstat(p).catch(() => undefined);
      // The last write (a temporary file is never renamed while it is one).
      if (!s || s.mtimeMs >= opts.before) continue;
      await unlink(p).then(
        () => report.tempFiles++,
        () => {},
      );
    }
    // 2. Versions published by a rename whose row never committed (or whose row moved on).
    let batch: ObjectLocation[] = [];
    const flush = async () => {
      const candidates = batch;
      batch = [];
      report.orphans += await opts.removeUnreferenced(candidates, async (loc) => {
        await unlink(this.pathOf(loc)).catch((err) => {
          if (!isMissing(err)) throw err;
        });
      });
    };
    const visit = async (dir: string, segments: string[]): Promise<void> => {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const p = join(dir, e.name);
        if (e.isDirectory()) {
          await visit(p, [...segments, segments.length === 0 ? e.name : keySegmentOfFile(e.name)]);
          continue;
        }
        const m = VERSION_LEAF.exec(e.name);
        const [bucket, ...keySegments] = segments;
        const version = m?.[1];
        if (!version || !bucket || keySegments.length === 0 || !e.isFile()) continue;
        // ctime: the rename that published it (mtime is the last write, before the rename).
        const s = await lstat(p).catch(() => undefined);
        if (!s || Math.max(s.mtimeMs, s.ctimeMs) >= opts.before) continue;
        batch.push({ bucket, key: keySegments.join('/'), version });
        if (batch.length >= SWEEP_BATCH) await flush();
      }
    };
    await visit(this.objectsRoot, []);
    if (batch.length) await flush();
    // 3. Folders left empty (by deletes, deleted buckets, or the removals above).
    const prune = async (dir: string): Promise<boolean> => {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
      if (!entries) return false;
      let empty = true;
      for (const e of entries) {
        if (!e.isDirectory() || !(await prune(join(dir, e.name)))) empty = false;
      }
      if (!empty || dir === this.objectsRoot) return false;
      try {
        await rmdir(dir);
        report.folders++;
        return true;
      } catch {
        return false;
      }
    };
    await prune(this.objectsRoot);
    return report;
  }

  async close(): Promise<void> {}
}
