/**
 * POST/GET {project}/graphql/v1 on the platform's Fastify app: the project comes from the
 * platform's routing (req.project), its pool and keys serve the request.
 * Limits: the platform's body limit; STRATA_GRAPHQL_MAX_DEPTH (default 20, 0 for none).
 */
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../../platform/platform.js';
import { GraphQLCore } from './core.js';
import { registerGraphQLRoutes } from './fastify-plugin.js';
import { DEFAULT_MAX_DEPTH, GRAPHQL_PATH } from './options.js';

function maxDepthFromEnv(v: string | undefined): number | false {
  if (v === undefined || v.trim() === '') return DEFAULT_MAX_DEPTH;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`STRATA_GRAPHQL_MAX_DEPTH must be a whole number (got "${v}")`);
  return n === 0 ? false : n;
}

export async function graphqlRoutes(app: FastifyInstance, opts: { platform: Platform }): Promise<void> {
  const core = new GraphQLCore(GRAPHQL_PATH, {
    maxBodyBytes: opts.platform.config.bodyLimit,
    maxDepth: maxDepthFromEnv(process.env.STRATA_GRAPHQL_MAX_DEPTH),
    logging: opts.platform.config.logRequests ? 'info' : 'error',
  });
  await registerGraphQLRoutes(app, { core, targetOf: (req) => req.project });
}
