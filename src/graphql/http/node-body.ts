/** Reads a Node request body into memory, up to a limit (Content-Length checked before reading). */
import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`Request body too large: the limit is ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

export class BadContentLengthError extends Error {
  constructor() {
    super('Content-Length header is invalid');
    this.name = 'BadContentLengthError';
  }
}

/** Throws BodyTooLargeError as soon as the declared or received size passes `limit`. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined) {
    if (!/^\d+$/.test(declared)) return Promise.reject(new BadContentLengthError());
    if (Number(declared) > limit) return Promise.reject(new BodyTooLargeError(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    /** Stops listening; false when the promise was already settled. */
    const settle = (): boolean => {
      if (done) return false;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      return true;
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Stop buffering; the rest is drained so the response can still be written.
        req.resume();
        if (settle()) reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (settle()) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      if (settle()) reject(err);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
