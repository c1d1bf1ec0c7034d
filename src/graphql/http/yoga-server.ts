/** The graphql-yoga server behind every serving form (Node http, Express, Fastify). */
import { createYoga, createSchema, type GraphiQLOptions, type YogaServerInstance } from 'graphql-yoga';
import { useStrataEngine, type StrataServerContext } from './engine-plugin.js';
import { limitsOf, schemaNoticesOf, type GraphQLHandlerOptions } from './options.js';
import { useQueryStringJson } from './query-string-json.js';
import { INTROSPECTION_HINT } from '../extension/local-introspection.js';

export type StrataYoga = YogaServerInstance<StrataServerContext, object>;

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
    // The body is read (with the limit) before yoga sees the request: see fetch-exchange.ts.
    maxRequestBodySize: false,
    cors: opts.cors ?? {
      origin: '*',
      methods: ['GET', 'POST', 'OPTIONS'],
      allowedHeaders: ['apikey', 'authorization', 'content-type', 'accept', 'x-client-info'],
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
