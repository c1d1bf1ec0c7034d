/**
 * The TUS data store: the bytes of an unfinished upload in `<storage>/.tus/<version>` (next to the
 * file backend's own folders), its description in `<version>.json`. Every PATCH is fsynced before
 * its new offset is answered, so an offset a client was told is durable; an interrupted PATCH
 * keeps what reached the file, and HEAD reports exactly that. When the upload completes, the file
 * backend takes the file as the object version (one read for the ETag, then a rename: the bytes
 * are not copied) and the description goes.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, open, readFile, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { DataStore, ERRORS, Upload } from '@tus/utils';
import type { FileBackend } from '../backend/file.js';
import type { StoredBytes } from '../service/uploads.js';
import { parseUploadId, TUS_EXTENSIONS } from './upload-id.js';

interface Description {
  id: string;
  size?: number;
  metadata?: Record<string, string | null>;
  creation_date: string;
}

export class TusFileStore extends DataStore {
  /** Completed uploads whose file the backend took, until their description goes (forget). */
  private readonly taken = new Set<string>();
  constructor(
    readonly directory: string,
    private readonly expirationMs: number,
    private readonly fsync: boolean,
    private readonly backend: FileBackend,
  ) {
    super();
    this.extensions = [...TUS_EXTENSIONS];
  }

  /** The bytes' file of an upload id (the version names it; ids are checked before). */
  dataPath(id: string): string {
    const u = parseUploadId(id);
    if (!u) throw ERRORS.FILE_NOT_FOUND;
    return join(this.directory, u.version);
  }

  private infoPath(id: string): string {
    return `${this.dataPath(id)}.json`;
  }

  private async sync(path: string): Promise<void> {
    if (!this.fsync) return;
    const fh = await open(path, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  }

  private async writeInfo(d: Description): Promise<void> {
    const path = this.infoPath(d.id);
    const tmp = `${path}.${process.pid}.tmp`;
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(JSON.stringify(d));
      if (this.fsync) await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  }

  private async readInfo(id: string): Promise<Description> {
    try {
      const d = JSON.parse(await readFile(this.infoPath(id), 'utf8')) as Description;
      if (d.id !== id) throw ERRORS.FILE_NOT_FOUND;
      return d;
    } catch {
      throw ERRORS.FILE_NOT_FOUND;
    }
  }

  override async create(upload: Upload): Promise<Upload> {
    await mkdir(this.directory, { recursive: true });
    upload.creation_date = new Date().toISOString();
    const fh = await open(this.dataPath(upload.id), 'wx');
    await fh.close();
    await this.writeInfo({
      id: upload.id,
      size: upload.size,
      metadata: upload.metadata,
      creation_date: upload.creation_date,
    });
    return upload;
  }

  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    const path = this.dataPath(id);
    let written = 0;
    const out = createWriteStream(path, { flags: 'r+', start: offset });
    stream.on('data', (chunk: Buffer) => {
      written += chunk.length;
    });
    try {
      await pipeline(stream, out);
    } finally {
      // What reached the file is the new durable offset, whether the body ended or broke off.
      await this.sync(path).catch(() => {});
    }
    return offset + written;
  }

  override async getUpload(id: string): Promise<Upload> {
    const d = await this.readInfo(id);
    const s = this.taken.has(id)
      ? { size: d.size ?? 0 }
      : await stat(this.dataPath(id)).catch(() => {
          throw ERRORS.FILE_NOT_FOUND;
        });
    return new Upload({
      id,
      size: d.size,
      offset: s.size,
      metadata: d.metadata,
      creation_date: d.creation_date,
      storage: { type: 'file', path: this.dataPath(id) },
    });
  }

  override async declareUploadLength(id: string, length: number): Promise<void> {
    const d = await this.readInfo(id);
    await this.writeInfo({ ...d, size: length });
  }

  override async remove(id: string): Promise<void> {
    const data = this.dataPath(id);
    let found = false;
    for (const p of [`${data}.json`, data]) {
      await unlink(p).then(
        () => {
          found = true;
        },
        () => {},
      );
    }
    if (!found) throw ERRORS.FILE_NOT_FOUND;
  }

  /** The completed upload's bytes, for the upload pipeline to take as the new object version. */
  stored(id: string): StoredBytes {
    const u = parseUploadId(id);
    if (!u) throw ERRORS.FILE_NOT_FOUND;
    return {
      version: u.version,
      take: async (loc, limits) => {
        const stored = await this.backend.adoptFile(this.dataPath(id), loc, limits);
        this.taken.add(id);
        return stored;
      },
    };
  }

  /** After completion: what is left of the upload (its description) goes. */
  async forget(id: string): Promise<void> {
    this.taken.delete(id);
    await this.remove(id).catch(() => {});
  }

  override getExpiration(): number {
    return this.expirationMs;
  }

  /**
   * Removes uploads created before `expiredBefore`, and stray data or temporary files (a crash
   * between the two writes of `create`, or of a description update) last touched before `strayBefore`.
   */
  async sweep(expiredBefore: number, strayBefore: number): Promise<number> {
    let removed = 0;
    const names = await readdir(this.directory).catch(() => [] as string[]);
    const described = new Set<string>();
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const path = join(this.directory, name);
      let d: Description | undefined;
      try {
        d = JSON.parse(await readFile(path, 'utf8')) as Description;
      } catch {
        d = undefined;
      }
      const created = d ? Date.parse(d.creation_date) : Number.NaN;
      if (d && parseUploadId(d.id) && created >= expiredBefore) {
        described.add(name.slice(0, -'.json'.length));
        continue;
      }
      await unlink(path).catch(() => {});
      await unlink(path.slice(0, -'.json'.length)).catch(() => {});
      removed++;
    }
    for (const name of names) {
      if (name.endsWith('.json') || described.has(name)) continue;
      const path = join(this.directory, name);
      const s = await stat(path).catch(() => undefined);
      if (!s || Math.max(s.mtimeMs, s.ctimeMs) >= strayBefore) continue;
      await unlink(path).catch(() => {});
      removed++;
    }
    return removed;
  }

  override async deleteExpired(): Promise<number> {
    return this.sweep(Date.now() - this.expirationMs, 0);
  }
}
