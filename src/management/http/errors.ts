/**
 * Management API errors: every failure is a JSON `{"message": ...}` body (the reference API's
 * NestJS shape). Throw an `ApiError` from a route or hook; anything else becomes a 500 with an
 * `errorEventId` (logged server-side with the same id, never with request secrets).
 */
import { randomBytes } from 'node:crypto';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  isDatabaseUnavailable,
  unavailableMessage,
} from '../../db/connection-errors.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { schemaErrorMessage } from './schema-errors.js';

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** Extra response headers (e.g. the rate-limit ones on a 429). */
    readonly headers: Record<string, string | number> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string) => new ApiError(400, message);
export const unauthorized = () => new ApiError(401, 'Unauthorized');
export const forbidden = (message = 'Forbidden resource') => new ApiError(403, message);
export const notFound = (message: string) => new ApiError(404, message);
export const conflict = (message: string) => new ApiError(409, message);

/** A handler for a route of a feature Strata does not offer: 404 with `message` saying so. */
export function refuse(message: string) {
  return async (): Promise<never> => {
    throw notFound(message);
  };
}

/** An error class a service throws for a request that cannot be served as asked. */
type ClientErrorClass = abstract new (...args: never[]) => Error;

/** `work`'s result; an error of one of `kinds` (the request's own fault) becomes a 400 with its message. */
export async function badRequestOn<T>(
  kinds: readonly ClientErrorClass[],
  work: () => T | Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (kinds.some((kind) => err instanceof kind)) throw badRequest((err as Error).message);
    throw err;
  }
}

/** The reference API's answer for any call on a deleted project. */
export const RESOURCE_REMOVED = 'Resource has been removed';

export function newErrorEventId(): string {
  return randomBytes(16).toString('hex');
}

/** Fastify's own request errors (bad JSON, wrong content type, body too large...) keep their status. */
function clientErrorOf(err: FastifyError): ApiError | undefined {
  const status = err.statusCode;
  if (!status || status < 400 || status >= 500) return undefined;
  if (err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return new ApiError(400, 'Request body is required');
  if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError)
    return new ApiError(400, 'Request body is not valid JSON');
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError(413, 'Request body is too large');
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError(415, 'Unsupported content type');
  return new ApiError(status, err.message);
}

/**
 * PostgreSQL's verdicts on the request's own values: a NUL or a byte sequence that is not text
 * (22021 character_not_in_repertoire, 22P05 untranslatable_character), a value too long for its
 * column (22001). Whatever path a value took to the database, these are the client's fault.
 */
const CLIENT_SQLSTATES: Record<string, string> = {
  '22021': 'Request contains a NUL character (\\u0000) or bytes that are not valid text',
  '22P05': 'Request contains a NUL character (\\u0000) or bytes that are not valid text',
  '22001': 'A value in the request is too long',
};

function databaseClientErrorOf(err: unknown): ApiError | undefined {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !(err as { severity?: unknown }).severity) return undefined;
  const message = CLIENT_SQLSTATES[code];
  return message ? new ApiError(400, message) : undefined;
}

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return reply.code(err.statusCode).type('application/json; charset=utf-8').send({ message: err.message });
}

/** Errors Fastify answers before any route runs (an undecodable path, an over-long parameter): `{message}`. */
export function sendManagementFrameworkError(
  err: FastifyError,
  _req: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  return sendError(reply, new ApiError(err.statusCode ?? 400, err.message));
}

/**
 * Installs the error and not-found handlers on the management scope. A request that fails its
 * route's schema is a 400 worded by schema-errors.ts. A route may set
 * `config.failureMessage` (the spec's per-operation 500 text, e.g. "Failed to retrieve project's
 * secrets"); without it a 500 says "Internal Server Error".
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ApiError) return sendError(reply, error);
    if (error.validation)
      return sendError(
        reply,
        badRequest(
          schemaErrorMessage(req, error.validation as ErrorObject[], error.validationContext ?? 'body'),
        ),
      );
    if (isDatabaseUnavailable(error))
      return sendError(
        reply,
        new ApiError(503, unavailableMessage(error), { 'Retry-After': DATABASE_RETRY_AFTER_SECONDS }),
      );
    const client = databaseClientErrorOf(error) ?? clientErrorOf(error);
    if (client) return sendError(reply, client);
    const errorEventId = newErrorEventId();
    req.log.error({ err: error, errorEventId }, 'management API request failed');
    if (!req.log.level || req.log.level === 'silent') {
      // Without a request logger, still leave a trace that can be matched to the response.
      console.error(
        `[management] ${req.method} ${req.routeOptions.url ?? req.url} failed (errorEventId ${errorEventId}): ${error.stack ?? error.message}`,
      );
    }
    const message = req.routeOptions.config?.failureMessage ?? 'Internal Server Error';
    return reply.code(500).type('application/json; charset=utf-8').send({ message, errorEventId });
  });
  app.setNotFoundHandler((req, reply) =>
    sendError(reply, new ApiError(404, `Cannot ${req.method} ${req.url.split('?')[0]}`)),
  );
}
