/** The GraphQL endpoint as Fastify routes (GET, POST, OPTIONS), given the core and how to find a request's project. */
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { abortedWhenClosed, type GraphQLCore } from './core.js';
import { JSON_CONTENT_TYPE, jsonErrorBody } from './json-errors.js';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  DATABASE_UNAVAILABLE_MESSAGE,
  isDatabaseUnavailable,
} from '../../db/connection-errors.js';
import type { GraphQLTarget } from './options.js';

export interface FastifyGraphQLRouteOptions {
  core: GraphQLCore;
  targetOf: (req: FastifyRequest) => GraphQLTarget | undefined | Promise<GraphQLTarget | undefined>;
}

/** Register inside its own encapsulated context (app.register): it replaces the content-type parsers there. */
export async function registerGraphQLRoutes(
  app: FastifyInstance,
  opts: FastifyGraphQLRouteOptions,
): Promise<void> {
  const { core } = opts;
  // Bodies reach the core as bytes (it parses them), read by Fastify with the limit.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: core.maxBodyBytes }, (_req, body, done) =>
    done(null, body),
  );
  app.route({
    method: ['GET', 'POST', 'OPTIONS'],
    url: core.endpoint,
    bodyLimit: core.maxBodyBytes,
    errorHandler: (err: FastifyError, _req, reply) => {
      if (isDatabaseUnavailable(err)) {
        return reply
          .status(503)
          .header('content-type', JSON_CONTENT_TYPE)
          .header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
          .send(jsonErrorBody(DATABASE_UNAVAILABLE_MESSAGE));
      }
      const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
      const message =
        err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? `Request body too large: the limit is ${core.maxBodyBytes} bytes`
          : status === 500
            ? 'Internal server error'
            : err.message;
      if (status === 500) reply.log.error(err);
      return reply.status(status).header('content-type', JSON_CONTENT_TYPE).send(jsonErrorBody(message));
    },
    handler: async (req, reply) => {
      const body = Buffer.isBuffer(req.body) ? req.body : undefined;
      const answer = await core.answer(
        req.method,
        req.url,
        req.headers,
        body,
        () => opts.targetOf(req),
        abortedWhenClosed(reply.raw),
      );
      return reply.status(answer.status).headers(answer.headers).send(answer.body);
    },
  });
}
