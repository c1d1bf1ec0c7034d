/**
 * createGraphQLHandler: `{base}/graphql/v1` for one database (or one per request), as a Node
 * `(req, res)` listener that also works as Express middleware, and as a Fastify plugin.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyPluginAsync } from 'fastify';
import { GraphQLCore, abortedWhenClosed } from './core.js';
import { bodyOrError, sendAnswer, sendJsonError } from './fetch-exchange.js';
import { registerGraphQLRoutes } from './fastify-plugin.js';
import { endpointOf, type GraphQLHandlerOptions, type GraphQLTarget } from './options.js';
import type { StrataYoga } from './yoga-server.js';

export interface GraphQLHandler {
  /** Node `http` listener; as Express middleware, other paths go to `next()`. */
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void;
  /** The served path, e.g. `/graphql/v1`. */
  readonly endpoint: string;
  /** The same endpoint as a Fastify plugin (register it without a prefix; use `basePath` instead). */
  readonly fastifyPlugin: FastifyPluginAsync;
  /** The underlying graphql-yoga server (built on first use). */
  yoga(): Promise<StrataYoga>;
}

function targetResolver(
  opts: GraphQLHandlerOptions,
): (req: IncomingMessage) => GraphQLTarget | undefined | Promise<GraphQLTarget | undefined> {
  if (opts.getTarget) return opts.getTarget;
  const { pool, getPool, jwtSecret, anonKey, serviceRoleKey } = opts;
  if (!jwtSecret) throw new Error('createGraphQLHandler: jwtSecret is required (or getTarget)');
  if (pool) {
    const target: GraphQLTarget = { pool, jwtSecret, anonKey, serviceRoleKey };
    return () => target;
  }
  if (getPool) return async (req) => ({ pool: await getPool(req), jwtSecret, anonKey, serviceRoleKey });
  throw new Error('createGraphQLHandler: one of pool, getPool or getTarget is required');
}

function pathOf(url: string | undefined): string {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return q >= 0 ? u.slice(0, q) : u;
}

export function createGraphQLHandler(opts: GraphQLHandlerOptions): GraphQLHandler {
  const endpoint = endpointOf(opts.basePath);
  const resolveTarget = targetResolver(opts);
  const core = new GraphQLCore(endpoint, opts);

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { body, error } = await bodyOrError(req, core.maxBodyBytes);
    if (error) return sendJsonError(res, error.status, error.message);
    const method = req.method ?? 'GET';
    sendAnswer(
      res,
      await core.answer(method, req.url, req.headers, body, () => resolveTarget(req), abortedWhenClosed(res)),
    );
  };

  const listener = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void => {
    if (pathOf(req.url) !== endpoint) {
      if (next) next();
      else sendJsonError(res, 404, 'Not found');
      return;
    }
    serve(req, res).catch((err: unknown) => {
      if (next) return next(err);
      if (!res.headersSent) sendJsonError(res, 500, 'Internal server error');
      else res.destroy(err instanceof Error ? err : undefined);
    });
  };

  const fastifyPlugin: FastifyPluginAsync = (app) =>
    registerGraphQLRoutes(app, { core, targetOf: (req) => resolveTarget(req.raw) });

  return Object.assign(listener, { endpoint, fastifyPlugin, yoga: () => core.yoga() });
}
