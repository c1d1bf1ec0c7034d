/**
 * The headers of an error reply, on the REST and the S3 surface alike: a download's own headers
 * removed (the error is not the object), the error's own headers set (e.g. a 416's Content-Range),
 * and `Connection: close` when the request body was cut off mid-way (a write failed and its stream
 * was torn down), rather than advertising keep-alive on a connection that is about to be dropped.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StorageError } from './errors.js';

export function setErrorHeaders(
  req: FastifyRequest,
  reply: FastifyReply,
  err: StorageError,
  remove: readonly string[],
): void {
  for (const name of remove) reply.removeHeader(name);
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  if (!req.raw.complete && req.raw.destroyed && !reply.raw.headersSent) reply.header('connection', 'close');
}
