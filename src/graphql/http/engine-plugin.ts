/**
 * The graphql-yoga plugin that hands GraphQL requests to the engine: yoga parses the HTTP request
 * (GET/POST, content types, GraphiQL, CORS, content negotiation); this plugin authenticates it,
 * applies the HTTP layer's rules (engine-call.ts), runs the document with the engine's
 * resolveWithPoolText (graphql-js never validates or executes it) and writes the engine's response
 * text as it is. The common POST skips yoga altogether (direct-post.ts) with the same outcome.
 */
import type { CancelSignal } from '../../db/cancel-request.js';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { HttpGraphQLError, runEngineRequest, type AuthenticatedRequest } from './engine-call.js';
import { JSON_CONTENT_TYPE, jsonErrorResponse } from './json-errors.js';
import type { GraphQLTarget, RequestLimits } from './options.js';
import { AuthError, principalOfRequest } from './request-principal.js';

/** What the adapters put in yoga's server context for each request. */
export interface StrataServerContext {
  /** The project the request is for (undefined: 404). */
  strataTarget: () => GraphQLTarget | undefined | Promise<GraphQLTarget | undefined>;
  /** Filled in by the plugin once the request is authenticated. */
  strataRequest?: AuthenticatedRequest;
  /** Aborted when the client is gone. */
  strataSignal?: CancelSignal;
}

export interface EnginePluginOptions {
  limits: RequestLimits;
  /** Notices of a newly loaded catalog (see runEngineRequest). */
  onCatalogNotices?: (notices: string[]) => void;
}

type ResultObject = Record<string, unknown>;

/**
 * Results written verbatim: the engine's response text (and the limit errors in the engine's
 * shape), carried through yoga by a stand-in object so that it is never parsed.
 */
const verbatim = new WeakMap<object, string>();

function asVerbatim(text: string): ResultObject {
  const standIn: ResultObject = {};
  verbatim.set(standIn, text);
  return standIn;
}

function mediaTypeFor(accept: string | null): string {
  if (
    accept &&
    !/application\/json|\*\/\*|application\/\*/.test(accept) &&
    accept.includes('application/graphql-response+json')
  ) {
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
        serverContext.strataRequest = {
          pool: target.pool,
          principal: await principalOfRequest(target, (name) => request.headers.get(name)),
        };
      } catch (err) {
        if (!(err instanceof AuthError)) throw err;
        endResponse(jsonErrorResponse(fetchAPI.Response, 401, err.message));
      }
    },

    onParams({ setParamsHandler }) {
      setParamsHandler(async ({ params, request, context }) => {
        const auth = (context as StrataServerContext).strataRequest;
        if (!auth) throw new Error('request reached execution without being authenticated');
        try {
          const result = await runEngineRequest(
            auth,
            {
              query: params.query ?? '',
              variables: (params.variables as Record<string, unknown> | undefined) ?? null,
              operationName: params.operationName ?? null,
            },
            request.method,
            opts.limits,
            (context as StrataServerContext).strataSignal,
            opts.onCatalogNotices,
          );
          return asVerbatim(result);
        } catch (err) {
          if (err instanceof HttpGraphQLError)
            throw createGraphQLError(err.message, {
              extensions: { http: { status: err.status, headers: err.headers } },
            });
          throw err;
        }
      });
    },

    onResultProcess({ result, request, setResultProcessor }) {
      if (Array.isArray(result)) return;
      const text = verbatim.get(result as object);
      if (text === undefined) return;
      const mediaType = mediaTypeFor(request.headers.get('accept'));
      setResultProcessor(
        (_res, fetchAPI) =>
          new fetchAPI.Response(text, {
            status: 200,
            headers: {
              'content-type':
                mediaType === 'application/json' ? JSON_CONTENT_TYPE : `${mediaType}; charset=utf-8`,
            },
          }),
        mediaType,
      );
    },
  };
}
