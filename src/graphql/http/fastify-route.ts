/**
 * POST/GET {project}/graphql/v1 on the platform's Fastify app: the project comes from the
 * platform's routing (req.project), its pool and keys serve the request.
 * Limits (config.ts): the platform's body limit, STRATA_GRAPHQL_MAX_DEPTH and
 * STRATA_GRAPHQL_MAX_SELECTIONS.
 */
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../../platform/platform.js';
import { GraphQLCore } from './core.js';
import { registerGraphQLRoutes } from './fastify-plugin.js';
import { GRAPHQL_PATH } from './options.js';

export async function graphqlRoutes(app: FastifyInstance, opts: { platform: Platform }): Promise<void> {
  const { config } = opts.platform;
  const core = new GraphQLCore(GRAPHQL_PATH, {
    maxBodyBytes: config.bodyLimit,
    maxDepth: config.graphqlMaxDepth,
    maxSelections: config.graphqlMaxSelections,
    logging: config.logRequests ? 'info' : 'error',
  });
  await registerGraphQLRoutes(app, { core, targetOf: (req) => req.project });
}
