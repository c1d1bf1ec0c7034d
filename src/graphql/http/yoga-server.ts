/**
 * The graphql-yoga server behind every serving form (Node http, Express, Fastify), for the requests
 * the direct path (direct-post.ts) leaves: yoga parses the HTTP request (GET/POST, content types,
 * GraphiQL, CORS, content negotiation); its plugin here authenticates it, applies the HTTP layer's
 * rules and runs the document with the engine (core.ts runEngineRequest; graphql-js never validates
 * or executes it) and writes the engine's response text as it is.
 */
import type { CancelSignal } from '../../db/cancel-request.js';
import {
  createGraphQLError,
  createSchema,
  createYoga,
  type GraphiQLOptions,
  type Plugin,
  type YogaServerInstance,
} from 'graphql-yoga';
import { INTROSPECTION_HINT } from '../extension/local-introspection.js';
import {
  AuthError,
  HttpGraphQLError,
  JSON_CONTENT_TYPE,
  jsonErrorResponse,
  principalOfRequest,
  runEngineRequest,
  type AuthenticatedRequest,
} from './core.js';
import {
  limitsOf,
  schemaNoticesOf,
  type GraphQLHandlerOptions,
  type GraphQLTarget,
  type RequestLimits,
} from './options.js';

/** What the adapters put in yoga's server context for each request. */
export interface StrataServerContext {
  /** The project the request is for (undefined: 404). */
  strataTarget: () => GraphQLTarget | undefined | Promise<GraphQLTarget | undefined>;
  /** Filled in by the plugin once the request is authenticated. */
  strataRequest?: AuthenticatedRequest;
  /** Aborted when the client is gone. */
  strataSignal?: CancelSignal;
}

export type StrataYoga = YogaServerInstance<StrataServerContext, object>;

interface EnginePluginOptions {
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

/** The plugin that hands GraphQL requests to the engine. */
function useStrataEngine(opts: EnginePluginOptions): Plugin<object, StrataServerContext> {
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

/**
 * A GET whose `variables` or `extensions` query-string parameter is not JSON gets 400 BAD_REQUEST,
 * as a POST body that is not JSON does. Yoga's GET parser calls JSON.parse on them unguarded, so
 * such a request used to end as a 500 "Unexpected error." with a stack trace in the log.
 */
function useQueryStringJson(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (request.method !== 'GET' || !requestParser) return;
      const parse = requestParser;
      setRequestParser((req) => {
        try {
          return parse(req);
        } catch (err) {
          if (!(err instanceof SyntaxError)) throw err;
          throw createGraphQLError('The "variables" and "extensions" query string parameters must be JSON.', {
            extensions: { http: { status: 400 }, code: 'BAD_REQUEST' },
          });
        }
      });
    },
  };
}

// Yoga wants a schema; the engine answers every request (introspection included, with
// pg_graphql's per-schema opt-in), so this one is never executed.
const PLACEHOLDER_SCHEMA = createSchema<StrataServerContext>({ typeDefs: 'type Query { _engine: Boolean }' });

const DEFAULT_GRAPHIQL_QUERY = `# Strata GraphQL (pg_graphql compatible).
# Put the project's anon key in the "apikey" header (Headers tab below).
#
# The docs explorer needs introspection, which pg_graphql leaves off: if it shows nothing (or the
# answer is "Unknown field __schema"), turn it on for the schema in SQL:
#   ${INTROSPECTION_HINT}
# (The default project of \`npm start\` has it on.)
{
  __typename
}
`;

/**
 * GraphiQL's page with its scripts and styles inlined (from npm): it works with no internet. The
 * module is a 9 MB script (about 45 MiB of the process once loaded), so it is imported on the first
 * page asked for, not at start.
 */
async function renderGraphiQL(options: GraphiQLOptions): Promise<string> {
  const page = await import('@graphql-yoga/render-graphiql');
  return page.renderGraphiQL(options);
}

export function createStrataYoga(endpoint: string, opts: GraphQLHandlerOptions): StrataYoga {
  const graphiql = opts.graphiql === undefined ? true : opts.graphiql;
  const g = typeof graphiql === 'object' ? graphiql : {};
  return createYoga<StrataServerContext>({
    schema: PLACEHOLDER_SCHEMA,
    graphqlEndpoint: endpoint,
    landingPage: false,
    multipart: false,
    batching: false,
    maskedErrors: true,
    logging: opts.logging ?? 'error',
    // The body is read (with the limit) before yoga sees the request: see handler.ts bodyOrError.
    maxRequestBodySize: false,
    cors: opts.cors ?? {
      origin: '*',
      // PUT and DELETE, and the token header: graphql-sse's single connection mode (src/realtime/).
      methods: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
      allowedHeaders: [
        'apikey',
        'authorization',
        'content-type',
        'accept',
        'x-client-info',
        'x-graphql-event-stream-token',
      ],
      maxAge: 3600,
    },
    graphiql:
      graphiql === false
        ? false
        : {
            title: g.title ?? 'Strata GraphQL',
            defaultQuery: g.defaultQuery ?? DEFAULT_GRAPHIQL_QUERY,
            headers: JSON.stringify(g.defaultHeaders ?? { apikey: '<anon key>' }, null, 2),
            shouldPersistHeaders: true,
          },
    renderGraphiQL,
    plugins: [
      useQueryStringJson(),
      useStrataEngine({ limits: limitsOf(opts), onCatalogNotices: schemaNoticesOf(opts) }),
    ],
  });
}
