/**
 * The platform's HTTP server: one Fastify app; requests are routed to a project by path prefix or
 * Host (see platform/routing.ts), then to the GraphQL, Storage or Management area.
 */
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  DATABASE_UNAVAILABLE_MESSAGE,
  isDatabaseUnavailable,
  unavailableMessage,
} from './db/connection-errors.js';
import type { StrataConfig } from './config.js';
import { Platform, type PlatformOptions } from './platform/platform.js';
import { registerProjectRouting, rewriteProjectUrl } from './platform/routing.js';
import { graphqlRoutes } from './graphql/http/fastify-route.js';
import { sendStorageFrameworkError, storageRoutes } from './storage/index.js';
import { managementRoutes, sendManagementFrameworkError } from './management/index.js';
import { projectBootstrapHooks } from './platform/bootstrap-hooks.js';
import { registerNetworkGuard } from './platform/network-guard.js';
import { registerRestNotServed } from './platform/rest-not-served.js';
import { registerFunctions, sendFunctionsFrameworkError } from './functions/index.js';
import { startPooler } from './platform/pooler.js';
import { consoleRoutes } from './console/plugin.js';
import { consoleLoginTokensOf } from './console/login-tokens.js';
import { registerNodeLifecycle, type NodeLifecycle } from './platform/node-lifecycle.js';
import { startRealtime, type RealtimeServer } from './realtime/index.js';

const lifecycles = new WeakMap<FastifyInstance, NodeLifecycle>();
const realtimes = new WeakMap<FastifyInstance, RealtimeServer>();

export async function buildServer(platform: Platform): Promise<FastifyInstance> {
  const app = Fastify({
    logger: platform.config.logRequests ? { level: 'info' } : false,
    bodyLimit: platform.config.bodyLimit,
    rewriteUrl: (req) => rewriteProjectUrl(req),
    trustProxy: false,
    forceCloseConnections: true,
    frameworkErrors: sendFrameworkError,
  });
  registerProjectRouting(app, platform);
  registerNetworkGuard(app, platform);
  // Errors of routes with no handler of their own (this /health, unknown paths): an unreachable
  // database is a 503 `{message}`, never the driver's text; anything else keeps Fastify's answer.
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (!isDatabaseUnavailable(err)) throw err;
    return reply
      .code(503)
      .header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
      .send({ message: unavailableMessage(err) });
  });
  // The platform's health: 200 while its database answers, 503 (with Retry-After) while it does not.
  app.get('/health', async (_req, reply) => {
    if (await platform.health.isUp()) return { status: 'ok', database: 'up' };
    return reply
      .code(503)
      .header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
      .send({ status: 'unavailable', database: 'down', message: DATABASE_UNAVAILABLE_MESSAGE });
  });
  lifecycles.set(app, registerNodeLifecycle(app, platform));
  // Subscriptions on {project}/graphql/v1 (src/realtime/): WebSocket upgrades, and event streams
  // through a preHandler of the GraphQL route (so before it); closed before the server.
  realtimes.set(app, startRealtime(app, platform));
  await app.register(graphqlRoutes, { platform });
  await app.register(storageRoutes, { platform, prefix: '/storage/v1' });
  await app.register(managementRoutes, { platform, prefix: '/v1' });
  await registerFunctions(app, platform);
  registerRestNotServed(app);
  await app.register(consoleRoutes, { logins: consoleLoginTokensOf(app) });
  return app;
}

type ErrorSender = (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => FastifyReply;

/** Each area's answer to the errors Fastify raises before routing (its mount prefix, its sender). */
const FRAMEWORK_ERROR_SENDERS: [RegExp, ErrorSender][] = [
  [/^\/storage\/v1(?=[/?]|$)/, sendStorageFrameworkError],
  [/^\/v1(?=[/?]|$)/, sendManagementFrameworkError],
  [/^\/functions\/v1(?=[/?]|$)/, sendFunctionsFrameworkError],
];

/**
 * A path that does not decode (`%zz`, a lone `%`) or a parameter over the router's length is
 * refused before any route or hook runs: in the shape of the area it was meant for, with Fastify's
 * status and wording; elsewhere Fastify's own answer.
 */
function sendFrameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const send = FRAMEWORK_ERROR_SENDERS.find(([prefix]) => prefix.test(req.url))?.[1];
  if (send) return send(err, req, reply);
  return reply.code(err.statusCode ?? 400).send(err);
}

export interface RunningPlatform {
  platform: Platform;
  app: FastifyInstance;
  /** http://host:port of the HTTP server. */
  url: string;
  port: number;
  /** GraphQL subscriptions (live queries) on this node. */
  realtime: RealtimeServer;
  /** The console's address with a fresh one-time login token for `accessToken` (not the token itself). */
  consoleLoginUrl(accessToken: string): string;
  /**
   * Stops the node. With `graceMs` (SIGTERM): /ready answers 503, no new connections are accepted,
   * and in-flight requests get up to `graceMs` to finish before the rest is closed.
   */
  close(opts?: { graceMs?: number }): Promise<void>;
}

/** Starts the database side and the HTTP server; `close()` stops both. */
export async function startPlatform(
  config: StrataConfig,
  options: PlatformOptions = {},
): Promise<RunningPlatform> {
  const platform = await Platform.start(config, { projectBootstrapHooks, ...options });
  let app: FastifyInstance;
  try {
    app = await buildServer(platform);
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await platform.close();
    throw err;
  }
  const pooler = await startPooler(platform, options.log ?? ((line) => console.warn(line)));
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  let closed = false;
  return {
    platform,
    app,
    url: `http://${host}:${port}`,
    port,
    realtime: realtimes.get(app) as RealtimeServer,
    consoleLoginUrl: (accessToken) =>
      `http://${host}:${port}/#login=${consoleLoginTokensOf(app).issue(accessToken)}`,
    async close(opts = {}) {
      if (closed) return;
      closed = true;
      if (opts.graceMs) await lifecycles.get(app)?.drain(opts.graceMs);
      await pooler?.close();
      await app.close().catch(() => {});
      await platform.close();
    },
  };
}
