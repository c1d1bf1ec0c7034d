/**
 * `Content-Encoding: aws-chunked` bodies (x-amz-content-sha256 STREAMING-*): frames of
 * `<hex size>[;chunk-signature=<sig>]\r\n<bytes>\r\n`, ended by a zero-size frame and optional
 * trailers. Decoded to the plain bytes; a malformed frame fails the stream. With a verifier
 * (STREAMING-AWS4-HMAC-SHA256-PAYLOAD*), every frame's signature is checked against the chain that
 * starts at the request's seed signature, so a body cannot be swapped under a captured header;
 * a bad frame fails the stream with SignatureDoesNotMatch (bytes already passed on are then
 * discarded by the failed write). A body whose request declared `x-amz-trailer` must end with that
 * trailer (a missing trailer block fails the stream, as AWS refuses it); trailer checksums
 * themselves are not checked.
 */
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { s3Errors } from './errors.js';
import type { ChunkVerifier } from './sigv4.js';

const MAX_HEADER = 4096;

export function isAwsChunked(contentSha: string | undefined, contentEncoding: string | undefined): boolean {
  return (
    (contentSha?.startsWith('STREAMING-') ?? false) ||
    (contentEncoding ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .includes('aws-chunked')
  );
}

export class AwsChunkedDecoder extends Transform {
  private buf: Buffer = Buffer.alloc(0);
  /** Bytes of data left in the current frame; -1 while reading a frame header; -2 when done. */
  private left = -1;
  /** The CRLF after a frame's data still has to be read. */
  private crlf = false;
  private hash?: Hash;
  private frameSignature = '';

  /** What follows the zero-size frame (the trailer block), when a trailer is expected. */
  private trailer = '';

  constructor(
    private readonly verify?: { check: ChunkVerifier; seedSignature: string },
    /** The trailer the request declared in `x-amz-trailer`, which must then be sent. */
    private readonly expectedTrailer?: string,
  ) {
    super();
    this.previous = verify?.seedSignature ?? '';
  }

  private previous: string;

  /** Checks the frame just read (its data hashed in `hash`). */
  private endFrame(): void {
    if (!this.verify) return;
    const digest = (this.hash ?? createHash('sha256')).digest('hex');
    this.hash = undefined;
    if (!this.verify.check(this.previous, digest, this.frameSignature))
      throw s3Errors.signatureDoesNotMatch(false);
    this.previous = this.frameSignature;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    try {
      this.drain();
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    const name = this.expectedTrailer?.trim().toLowerCase();
    if (this.left !== -2) done(s3Errors.invalidArgument('Incomplete aws-chunked body'));
    else if (name && !this.trailer.split('\r\n').some((line) => line.toLowerCase().startsWith(`${name}:`)))
      done(s3Errors.invalidArgument(`The trailer ${name} declared in x-amz-trailer is missing`));
    else done();
  }

  private drain(): void {
    for (;;) {
      if (this.left === -2) {
        // The trailer block is kept (bounded) only to check that the declared trailer came.
        if (this.expectedTrailer && this.trailer.length < MAX_HEADER)
          this.trailer += this.buf.toString('latin1').slice(0, MAX_HEADER);
        this.buf = Buffer.alloc(0);
        return;
      }
      if (this.crlf) {
        if (this.buf.length < 2) return;
        if (this.buf[0] !== 0x0d || this.buf[1] !== 0x0a)
          throw s3Errors.invalidArgument('Malformed aws-chunked body');
        this.buf = this.buf.subarray(2);
        this.crlf = false;
      }
      if (this.left === -1) {
        const nl = this.buf.indexOf('\r\n');
        if (nl < 0) {
          if (this.buf.length > MAX_HEADER) throw s3Errors.invalidArgument('Malformed aws-chunked body');
          return;
        }
        const header = this.buf.subarray(0, nl).toString('latin1');
        this.buf = this.buf.subarray(nl + 2);
        const [sizePart, ...ext] = header.split(';');
        const sizeText = (sizePart ?? '').trim();
        const signed = ext.map((e) => e.trim()).find((e) => e.startsWith('chunk-signature='));
        this.frameSignature = signed ? signed.slice('chunk-signature='.length) : '';
        if (this.verify && !/^[0-9a-f]{64}$/.test(this.frameSignature))
          throw s3Errors.invalidArgument('Malformed aws-chunked body');
        if (!/^[0-9a-fA-F]{1,16}$/.test(sizeText))
          throw s3Errors.invalidArgument('Malformed aws-chunked body');
        const size = Number.parseInt(sizeText, 16);
        if (size === 0) {
          this.endFrame();
          this.left = -2;
          continue;
        }
        this.left = size;
        if (this.verify) this.hash = createHash('sha256');
      }
      if (this.buf.length === 0) return;
      const take = Math.min(this.left, this.buf.length);
      const data = this.buf.subarray(0, take);
      this.hash?.update(data);
      this.push(data);
      this.buf = this.buf.subarray(take);
      this.left -= take;
      if (this.left === 0) {
        this.endFrame();
        this.left = -1;
        this.crlf = true;
      } else return;
    }
  }
}
