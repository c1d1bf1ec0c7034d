/**
 * createGraphQLHandler: `{base}/graphql/v1` for one database (or one per request), as a Node
 * `(req, res)` listener that also works as Express middleware, and as a Fastify plugin.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyPluginAsync } from 'fastify';
import { createStrataYoga, type StrataYoga } from './yoga-server.js';
import type { StrataServerContext } from './engine-plugin.js';
import { JSON_CONTENT_TYPE, jsonErrorBody } from './json-errors.js';
import { endpointOf, type GraphQLHandlerOptions, type GraphQLTarget } from './options.js';
import { registerGraphQLRoutes } from './fastify-plugin.js';

export interface GraphQLHandler {
  /** Node `http` listener; as Express middleware, other paths go to `next()`. */
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void;
  /** The served path, e.g. `/graphql/v1`. */
  readonly endpoint: string;
  /** The same endpoint as a Fastify plugin (register it without a prefix; use `basePath` instead). */
  readonly fastifyPlugin: FastifyPluginAsync;
  /** The underlying graphql-yoga server. */
  readonly yoga: StrataYoga;
}

function targetResolver(opts: GraphQLHandlerOptions): (req: IncomingMessage) => GraphQLTarget | undefined | Promise<GraphQLTarget | undefined> {
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

type NodeListenerWithContext = (req: IncomingMessage, res: ServerResponse, ctx: StrataServerContext) => Promise<void>;

function pathOf(url: string | undefined): string {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return q >= 0 ? u.slice(0, q) : u;
}

export function createGraphQLHandler(opts: GraphQLHandlerOptions): GraphQLHandler {
  const endpoint = endpointOf(opts.basePath);
  const resolveTarget = targetResolver(opts);
  const yoga = createStrataYoga(endpoint, opts);

  const listener = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void => {
    if (pathOf(req.url) !== endpoint) {
      if (next) return next();
      res.writeHead(404, { 'content-type': JSON_CONTENT_TYPE }).end(jsonErrorBody('Not found'));
      return;
    }
    const ctx: StrataServerContext = { strataTarget: () => resolveTarget(req) };
    // The adapter takes a server context after (req, res); its typings list only the first two.
    void (yoga.requestListener as unknown as NodeListenerWithContext)(req, res, ctx);
  };

  const fastifyPlugin: FastifyPluginAsync = (app) =>
    registerGraphQLRoutes(app, { yoga, endpoint, targetOf: (req) => resolveTarget(req.raw) });

  return Object.assign(listener, { endpoint, fastifyPlugin, yoga });
}
