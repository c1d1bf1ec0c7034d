/**
 * The graphql-yoga plugin that hands every GraphQL request to the engine: yoga parses the HTTP
 * request (GET/POST, content types, GraphiQL, CORS, body size); this plugin authenticates it,
 * applies the depth limit and the no-mutation-over-GET rule, runs the document with the engine's
 * resolveWithPool (graphql-js never parses for execution, validates or executes it) and writes
 * the engine's result as it is.
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { Principal } from '../../db/with-role.js';
import { loadEngine } from './engine-port.js';
import { JSON_CONTENT_TYPE, jsonErrorResponse } from './json-errors.js';
import type { GraphQLTarget } from './options.js';
import { queryShape } from './query-shape.js';
import { AuthError, principalOfRequest } from './request-principal.js';
import { transientFailure } from './transient-errors.js';

/** What the adapters put in yoga's server context for each request. */
export interface StrataServerContext {
  /** The project the request is for (undefined: 404). */
  strataTarget: () => GraphQLTarget | undefined | Promise<GraphQLTarget | undefined>;
  /** Filled in by the plugin once the request is authenticated. */
  strataRequest?: { pool: GraphQLTarget['pool']; principal: Principal };
}

export interface EnginePluginOptions {
  maxDepth: number | false;
}

type ResultObject = Record<string, unknown>;

/** Results written verbatim (the engine's, and the depth-limit error in the engine's shape). */
const verbatim = new WeakSet<object>();

function asVerbatim(result: ResultObject): ResultObject {
  verbatim.add(result);
  return result;
}

function mediaTypeFor(accept: string | null): string {
  if (accept && !/application\/json|\*\/\*|application\/\*/.test(accept) && accept.includes('application/graphql-response+json')) {
    return 'application/graphql-response+json';
  }
  return 'application/json';
}

export function useStrataEngine(opts: EnginePluginOptions): Plugin<object, StrataServerContext> {
  return {
    async onRequestParse({ request, serverContext, endResponse, fetchAPI }) {
      const target = await serverContext.strataTarget();
      if (!target) {
        endResponse(jsonErrorResponse(fetchAPI.Response, 404, 'Project not found'));
        return;
      }
      try {
        serverContext.strataRequest = { pool: target.pool, principal: await principalOfRequest(target, request.headers) };
      } catch (err) {
        if (!(err instanceof AuthError)) throw err;
        endResponse(jsonErrorResponse(fetchAPI.Response, 401, err.message));
      }
    },

    onParams({ setParamsHandler }) {
      setParamsHandler(async ({ params, request, context }) => {
        const auth = (context as StrataServerContext).strataRequest;
        if (!auth) throw new Error('request reached execution without being authenticated');
        const query = params.query ?? '';
        const shape = queryShape(query, params.operationName);
        if (shape && request.method === 'GET' && shape.operation === 'mutation') {
          throw createGraphQLError('Can only perform a mutation operation from a POST request.', {
            extensions: { http: { status: 405, headers: { Allow: 'POST' } } },
          });
        }
        if (shape && opts.maxDepth !== false && shape.depth > opts.maxDepth) {
          return asVerbatim({ errors: [{ message: `Query depth ${shape.depth} exceeds the maximum allowed depth of ${opts.maxDepth}` }] });
        }
        const engine = await loadEngine();
        try {
          const result = await engine.resolveWithPool(auth.pool, auth.principal, {
            query,
            variables: (params.variables as Record<string, unknown> | undefined) ?? null,
            operationName: params.operationName ?? null,
          });
          return asVerbatim(result);
        } catch (err) {
          const transient = transientFailure(err);
          if (transient) {
            throw createGraphQLError(transient, { extensions: { http: { status: 503, headers: { 'Retry-After': '1' } } } });
          }
          throw err;
        }
      });
    },

    onResultProcess({ result, request, setResultProcessor }) {
      if (Array.isArray(result) || !verbatim.has(result as object)) return;
      const mediaType = mediaTypeFor(request.headers.get('accept'));
      setResultProcessor(
        (res, fetchAPI) =>
          new fetchAPI.Response(JSON.stringify(res), {
            status: 200,
            headers: { 'content-type': mediaType === 'application/json' ? JSON_CONTENT_TYPE : `${mediaType}; charset=utf-8` },
          }),
        mediaType,
      );
    },
  };
}
