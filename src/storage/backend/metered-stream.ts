/**
 * A pass-through that counts bytes, computes the MD5 ETag (in a worker thread: md5-worker.ts), and
 * fails past a byte limit. Its buffers are large (1 MiB), so the socket keeps being read while the
 * file write of earlier chunks is in progress. The bytes it passes are counted for young-gc.ts
 * (the body's buffers are collected every few MiB rather than piling up).
 */
import { type Readable, Transform, type TransformCallback, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { WorkerMd5 } from './md5-worker.js';
import { bodyBytesPassed } from './young-gc.js';

/** Bytes a stage of the upload path may hold before it pushes back. */
export const STREAM_BUFFER = 1024 * 1024;

export class MeteredStream extends Transform {
  bytes = 0;
  /** Absent when the caller does not want the MD5 (`hash: false`). */
  private readonly hash?: WorkerMd5;

  constructor(
    private readonly maxBytes: number,
    private readonly limitError: () => Error,
    opts: { hash: boolean } = { hash: true },
  ) {
    super({ highWaterMark: STREAM_BUFFER });
    if (opts.hash) this.hash = new WorkerMd5();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    bodyBytesPassed(chunk.length);
    if (this.bytes > this.maxBytes) {
      cb(this.limitError());
      return;
    }
    let wait: Promise<void> | undefined;
    try {
      wait = this.hash?.update(chunk);
    } catch (err) {
      cb(err as Error);
      return;
    }
    this.push(chunk);
    if (wait) wait.then(() => cb(), cb);
    else cb();
  }

  override _destroy(err: Error | null, cb: (error?: Error | null) => void): void {
    if (err) this.hash?.discard();
    cb(err);
  }

  /** Drops the hash of a write that failed without this stream failing. */
  discard(): void {
    this.hash?.discard();
  }

  /** Quoted hex MD5 of everything that passed; call once, after the end (only with `hash`). */
  async eTag(): Promise<string> {
    if (!this.hash) throw new Error('this stream computes no MD5');
    return `"${await this.hash.digest()}"`;
  }
}

/** The MD5 ETag and size of a stream's bytes (failing past `maxBytes`), the bytes going nowhere. */
export async function digestStream(
  source: Readable,
  maxBytes: number,
  limitError: () => Error,
): Promise<{ eTag: string; size: number }> {
  const meter = new MeteredStream(maxBytes, limitError);
  const sink = new Writable({
    write(_chunk, _enc, cb) {
      cb();
    },
  });
  await pipeline(source, meter, sink);
  return { eTag: await meter.eTag(), size: meter.bytes };
}
