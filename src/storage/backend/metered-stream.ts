/** A pass-through that counts bytes, computes the MD5 ETag, and fails past a byte limit. */
import { Transform, type TransformCallback } from 'node:stream';
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
