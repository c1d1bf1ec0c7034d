/** A pass-through that counts bytes, computes the MD5 ETag, and fails past a byte limit. */
import { type Readable, Transform, type TransformCallback, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createHash, type Hash } from 'node:crypto';

export class MeteredStream extends Transform {
  bytes = 0;
  private readonly hash: Hash = createHash('md5');

  constructor(
    private readonly maxBytes: number,
    private readonly limitError: () => Error,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      cb(this.limitError());
      return;
    }
    this.hash.update(chunk);
    cb(null, chunk);
  }

  /** Quoted hex MD5 of everything that passed; call once, after the end. */
  eTag(): string {
    return `"${this.hash.digest('hex')}"`;
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
  return { eTag: meter.eTag(), size: meter.bytes };
}
