/**
 * File-system backend: `<root>/buckets/<bucket>/<key segments>/~<version>`. Writes go to
 * `<root>/.tmp/` and are renamed into place, so a failed or aborted write leaves nothing. Every path
 * is resolved and checked to stay inside its bucket directory. The `~` of the version leaf cannot
 * occur in a key, so a version file never collides with a key's directory.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rmdir, stat, unlink } from 'node:fs/promises';
import { join, resolve, sep, dirname } from 'node:path';
import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { MeteredStream } from './metered-stream.js';
import type { ByteRange, ObjectLocation, PutOptions, StorageBackend, StoredObject } from './interface.js';

const VERSION = /^[0-9a-f-]{36}$/;

/** The bytes reach the disk before the row that points at them is committed. */
/**
 * Uploaded bytes are fsynced before the rename that publishes them, so an acknowledged upload
 * survives a crash. STRATA_STORAGE_FSYNC=0 skips it (faster large uploads, for disposable data).
 */
const FSYNC = process.env.STRATA_STORAGE_FSYNC !== '0';

async function syncFile(path: string): Promise<void> {
  if (!FSYNC) return;
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export class FileBackend implements StorageBackend {
  readonly kind = 'file' as const;
  private readonly objectsRoot: string;
  private readonly tmpRoot: string;

  constructor(root: string) {
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
    const p = resolve(dir, ...loc.key.split('/'), `~${loc.version}`);
    if (!p.startsWith(dir + sep)) throw new Error('key escapes the bucket directory');
    return p;
  }

  async put(loc: ObjectLocation, body: Readable, opts: PutOptions): Promise<StoredObject> {
    return this.writeVersion(
      body,
      this.pathOf(loc),
      new MeteredStream(opts.maxBytes, opts.limitError),
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
    try {
      await pipeline(source, meter, createWriteStream(tmp, { flags: 'wx' }), signal ? { signal } : {});
      await syncFile(tmp);
      await this.moveIntoPlace(tmp, target);
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
    const s = await stat(target);
    return { eTag: meter.eTag(), size: meter.bytes, lastModified: s.mtime };
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
    let fh: Awaited<ReturnType<typeof open>>;
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
    return fh.createReadStream(
      range
        ? { start: range.start, end: range.end, highWaterMark: 256 * 1024 }
        : { highWaterMark: 256 * 1024 },
    );
  }

  async copy(from: ObjectLocation, to: ObjectLocation): Promise<StoredObject> {
    const src = this.pathOf(from);
    const target = this.pathOf(to);
    return this.writeVersion(
      createReadStream(src),
      target,
      new MeteredStream(Number.MAX_SAFE_INTEGER, () => new Error('unreachable')),
    );
  }

  async delete(locs: ObjectLocation[]): Promise<void> {
    for (const loc of locs) {
      const p = this.pathOf(loc);
      await unlink(p).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT' && err.code !== 'ENOTDIR') throw err;
      });
      await this.prune(dirname(p), this.bucketDir(loc.bucket));
    }
  }

  /** Removes empty directories from `dir` up to (not including) `stop`. */
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

  async close(): Promise<void> {}
}
