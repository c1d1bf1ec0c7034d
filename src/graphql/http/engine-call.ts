/**
 * One GraphQL request handed to the engine, after the HTTP layer's own rules: no mutation over
 * GET (405), the depth and width limits (errors-only results in the engine's shape), and transient
 * failures as 503. Used by the yoga plugin and by the direct POST path alike. The answer is the
 * response body's JSON text (the statements' JSON is never parsed on the way).
 */
import type { CancelSignal } from '../../db/cancel-request.js';
import type pg from 'pg';
import type { Principal } from '../../db/with-role.js';
import { loadEngine, type GraphQLRequestBody } from './engine-port.js';
import type { RequestLimits } from './options.js';
import { queryShape } from './query-shape.js';
import { GraphQLEngineError } from '../plan/errors.js';
import { parseRequestDocument } from '../execute/document.js';
import { transientFailure } from './transient-errors.js';

export interface AuthenticatedRequest {
  pool: pg.Pool;
  principal: Principal;
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

/**
 * Introspection answers multiply along nested lists (`types { fields { type { fields ...`): more
 * than the standard introspection query's 3 levels is refused, whatever the depth limit.
 */
export const MAX_INTROSPECTION_LISTS = 3;

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
    return JSON.stringify({
      errors: [
        { message: `Query depth ${shape.depth} exceeds the maximum allowed depth of ${limits.maxDepth}` },
      ],
    });
  }
  if (shape && limits.maxSelections !== false && shape.selections > limits.maxSelections) {
    return JSON.stringify({
      errors: [
        {
          message: `Query selection count ${shape.selections} exceeds the maximum allowed selection count of ${limits.maxSelections}`,
        },
      ],
    });
  }
  if (shape && shape.introspectionLists > MAX_INTROSPECTION_LISTS) {
    return JSON.stringify({
      errors: [
        {
          message: `Introspection nests ${shape.introspectionLists} list fields, more than the maximum allowed of ${MAX_INTROSPECTION_LISTS}`,
        },
      ],
    });
  }
  const engine = await loadEngine();
  try {
    return await engine.resolveWithPoolText(auth.pool, auth.principal, {
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
