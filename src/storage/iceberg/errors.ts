/**
 * Errors of the /iceberg routes, in the Iceberg REST catalog's shape `{ error: { message, type,
 * code } }` with `code` the HTTP status (as the reference formats every error under /iceberg,
 * Storage errors included: `type` is then the Storage error code, e.g. AccessDenied).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../../db/connection-errors.js';
import { StorageError, errors as storageErrors, fromSystemError } from '../errors.js';
import { JsonSyntaxError } from './json.js';

export class IcebergError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = 'IcebergError';
  }
}

export const iceErrors = {
  badRequest: (message: string) => new IcebergError(400, 'BadRequestException', message),
  noSuchCatalog: (name: string) => new IcebergError(404, 'NoSuchCatalog', `Catalog name "${name}" not found`),
  noSuchBucket: () => new IcebergError(404, 'NoSuchBucket', 'Bucket not found'),
  bucketExists: () => new IcebergError(409, 'ResourceAlreadyExists', 'The resource already exists'),
  noSuchNamespace: () => new IcebergError(404, 'NoSuchNamespaceException', 'Namespace not found'),
  noSuchTable: () => new IcebergError(404, 'NoSuchTableException', 'Table not found'),
  tableExists: () => new IcebergError(409, 'AlreadyExistsException', 'Table already exists'),
  notEmpty: (resource: string, name: string) =>
    new IcebergError(400, 'IcebergResourceNotEmpty', `The resource ${resource}: ${name} is not empty`),
  commitFailed: (message: string) => new IcebergError(409, 'CommitFailedException', message),
  unprocessable: (message: string) => new IcebergError(422, 'UnprocessableEntityException', message),
  unsupported: (message: string) => new IcebergError(406, 'UnsupportedOperationException', message),
  invalidRole: () => new IcebergError(403, 'AccessDenied', 'Access denied: Invalid role'),
};

function toIcebergError(err: unknown): IcebergError {
  if (err instanceof IcebergError) return err;
  if (err instanceof JsonSyntaxError) return iceErrors.badRequest(`Body is not valid JSON: ${err.message}`);
  const se =
    err instanceof StorageError
      ? err
      : isDatabaseUnavailable(err)
        ? storageErrors.databaseUnavailable(err)
        : fromSystemError(err);
  if (se) return new IcebergError(se.status, se.code, se.message);
  const fe = err as FastifyError;
  if (fe.code === 'FST_ERR_VALIDATION' || fe.validation) return iceErrors.badRequest(fe.message);
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new IcebergError(fe.statusCode, 'BadRequestException', fe.message);
  }
  return new IcebergError(500, 'InternalServerError', 'Internal Server Error');
}

/** The error handler of the /iceberg context. */
export function sendIcebergError(err: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const e = toIcebergError(err);
  if (e.status >= 500 && e.status !== 503) req.log.error({ err }, 'iceberg request failed');
  reply.code(e.status);
  if (e.status === 503) reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
  if (req.method === 'HEAD' || reply.raw.headersSent) return reply.send();
  return reply
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ error: { message: e.message, type: e.type, code: e.status } }));
}
