/** The GraphQL endpoint as Fastify routes (GET, POST, OPTIONS), given the yoga server and how to find a request's project. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StrataServerContext } from './engine-plugin.js';
import type { GraphQLTarget } from './options.js';
import type { StrataYoga } from './yoga-server.js';

export interface FastifyGraphQLRouteOptions {
  yoga: StrataYoga;
  endpoint: string;
  targetOf: (req: FastifyRequest) => GraphQLTarget | undefined | Promise<GraphQLTarget | undefined>;
}

/** Writes a Fetch API Response (from graphql-yoga) through a Fastify reply. */
async function sendFetchResponse(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.status(response.status);
  response.headers.forEach((value, key) => {
    reply.header(key, value);
  });
  const body = response.body ? Buffer.from(await response.arrayBuffer()) : undefined;
  return reply.send(body);
}

/** Register inside its own encapsulated context (app.register): it replaces the content-type parsers there. */
export async function registerGraphQLRoutes(app: FastifyInstance, opts: FastifyGraphQLRouteOptions): Promise<void> {
  // Yoga reads the body itself (with its size limit): keep Fastify's parsers out of this scope.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
  app.route({
    method: ['GET', 'POST', 'OPTIONS'],
    url: opts.endpoint,
    handler: async (req, reply) => {
      const ctx: StrataServerContext = { strataTarget: () => opts.targetOf(req) };
      const response = await opts.yoga.handleNodeRequestAndResponse(req, reply, ctx);
      return sendFetchResponse(reply, response);
    },
  });
}
