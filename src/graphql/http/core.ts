/**
 * What every serving form shares once a request's parameters are known: who the caller is (the
 * project's apikey, a bearer JWT), the HTTP layer's own rules (no mutation over GET, depth and width
 * limits, transient failures as 503), the engine call (resolveWithPoolText in engine.ts) and the
 * JSON shape of the layer's own errors. The direct POST path (direct-post.ts) and the yoga plugin
 * (yoga-server.ts) both answer through runEngineRequest; the adapters are in handler.ts.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type pg from 'pg';
import { AuthError, principalOf } from '../../auth/principal.js';
import { apiKeyOf, bearerOf } from '../../auth/request-credentials.js';
import type { CancelSignal } from '../../db/cancel-request.js';
import { isDatabaseUnavailable, unavailableMessage } from '../../db/connection-errors.js';
import type { Principal } from '../../db/with-role.js';
import { resolveWithPoolText } from '../engine.js';
import { parseRequestDocument } from '../execute/document.js';
import { GraphQLEngineError } from '../plan/errors.js';
import type { GraphQLTarget, RequestLimits } from './options.js';
import { queryShape } from './query-shape.js';

export { AuthError };

/** The GraphQL parameters of one HTTP request. */
export interface GraphQLRequestBody {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

/** One answer of the HTTP layer, whichever path made it. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface AuthenticatedRequest {
  pool: pg.Pool;
  principal: Principal;
}

// ── The layer's own error responses: JSON, readable by gateways (`message`) and GraphQL clients (`errors`).

export function jsonErrorBody(message: string): string {
  return JSON.stringify({ message, errors: [{ message }] });
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function jsonErrorResponse(
  ResponseCtor: typeof Response,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new ResponseCtor(jsonErrorBody(message), {
    status,
    headers: { 'content-type': JSON_CONTENT_TYPE, ...headers },
  });
}

/** A failure answered with an HTTP status and `{"errors":[{"message"}]}`. */
export class HttpGraphQLError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpGraphQLError';
  }
}

// ── The caller.

/** Reads one request header by its lower-case name. */
export type HeaderGetter = (name: string) => string | null | undefined;

/**
 * The Principal of one request: the apikey header must be the project's, a bearer JWT picks the
 * user. Throws AuthError (→ 401) when the credentials are missing or not the target project's.
 */
export function principalOfRequest(target: GraphQLTarget, header: HeaderGetter): Promise<Principal> {
  const nodeHeaders: IncomingHttpHeaders = {
    apikey: header('apikey') ?? undefined,
    authorization: header('authorization') ?? undefined,
  };
  return principalOf(
    {
      jwtSecret: target.jwtSecret,
      anonKey: target.anonKey ?? '',
      serviceRoleKey: target.serviceRoleKey ?? '',
    },
    apiKeyOf(nodeHeaders),
    bearerOf(nodeHeaders),
  );
}

// ── Transient failures: they say "try again" rather than "your request is wrong" (503 with Retry-After).

// SQLSTATE classes and codes.
const TRANSIENT_CLASSES = ['08', '53', '57']; // connection exception, insufficient resources, operator intervention
const TRANSIENT_CODES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);
// Missing objects are transient only when they are the engine's own (schema `graphql`), being
// reinstalled (extension upgrade).
const ENGINE_OBJECT_CODES = new Set([
  '3F000', // invalid_schema_name
  '42883', // undefined_function
  '42P01', // undefined_table
  'XX000', // internal_error: "cache lookup failed" while objects are swapped
]);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * A client-facing message when `err` is transient (the database restarting or unreachable,
 * serialization failures, the engine's objects missing for a moment while they are reinstalled),
 * else undefined.
 */
export function transientFailure(err: unknown): string | undefined {
  if (!err || typeof err !== 'object') return undefined;
  // The database unreachable or going away: one message for every API, no driver text.
  if (isDatabaseUnavailable(err)) return unavailableMessage(err);
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : '';
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return 'The database is unreachable at the moment; retry the request';
    if (
      /^[0-9A-Z]{5}$/.test(code) &&
      (TRANSIENT_CODES.has(code) || TRANSIENT_CLASSES.includes(code.slice(0, 2)))
    ) {
      return `The GraphQL API is temporarily unavailable (${message}); retry the request`;
    }
    if (
      ENGINE_OBJECT_CODES.has(code) &&
      (/\bgraphql\b/.test(message) || /cache lookup failed/.test(message))
    ) {
      return `The GraphQL API is being updated (${message}); retry the request`;
    }
  }
  if (/Connection terminated/i.test(message)) {
    return 'The database connection was interrupted; retry the request';
  }
  return undefined;
}

// ── The engine call.

/**
 * Introspection answers multiply along nested lists (`types { fields { type { fields ...`): more
 * than the standard introspection query's 3 levels is refused, whatever the depth limit.
 */
export const MAX_INTROSPECTION_LISTS = 3;

function errorsOnly(message: string): string {
  return JSON.stringify({ errors: [{ message }] });
}

/**
 * One GraphQL request handed to the engine, after the HTTP layer's own rules: no mutation over
 * GET (405), the depth and width limits (errors-only results in the engine's shape), and transient
 * failures as 503. The answer is the response body's JSON text (the statements' JSON is never
 * parsed on the way).
 */
export async function runEngineRequest(
  auth: AuthenticatedRequest,
  req: GraphQLRequestBody,
  method: string,
  limits: RequestLimits,
  /** Aborted when the client is gone: a query still running in PostgreSQL is cancelled. */
  signal?: CancelSignal,
  /** Told what a newly loaded catalog's notices say (the server logs them). */
  onCatalogNotices?: (notices: string[]) => void,
): Promise<string> {
  const parsed = parseRequestDocument(req.query);
  const shape = parsed instanceof GraphQLEngineError ? null : queryShape(parsed, req.operationName);
  if (shape && method === 'GET' && shape.operation === 'mutation') {
    throw new HttpGraphQLError(405, 'Can only perform a mutation operation from a POST request.', {
      Allow: 'POST',
    });
  }
  if (shape && limits.maxDepth !== false && shape.depth > limits.maxDepth) {
    return errorsOnly(`Query depth ${shape.depth} exceeds the maximum allowed depth of ${limits.maxDepth}`);
  }
  if (shape && limits.maxSelections !== false && shape.selections > limits.maxSelections) {
    return errorsOnly(
      `Query selection count ${shape.selections} exceeds the maximum allowed selection count of ${limits.maxSelections}`,
    );
  }
  if (shape && shape.introspectionLists > MAX_INTROSPECTION_LISTS) {
    return errorsOnly(
      `Introspection nests ${shape.introspectionLists} list fields, more than the maximum allowed of ${MAX_INTROSPECTION_LISTS}`,
    );
  }
  try {
    return await resolveWithPoolText(auth.pool, auth.principal, {
      query: req.query,
      variables: req.variables ?? null,
      operationName: req.operationName ?? null,
      parsed,
      signal,
      onCatalogNotices,
    });
  } catch (err) {
    const transient = transientFailure(err);
    if (transient) throw new HttpGraphQLError(503, transient, { 'Retry-After': '1' });
    throw err;
  }
}
