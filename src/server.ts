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
import { registerNetworkGuard } from './platform/network-guard.js';
import { registerRestNotServed } from './platform/rest-not-served.js';
import {
  createEdgeFunctions,
  type EdgeFunctions,
  registerFunctions,
  sendFunctionsFrameworkError,
} from './functions/index.js';
import { startPooler } from './platform/pooler.js';
import { ConsoleLoginTokens } from './console/login-tokens.js';
import { buildConsoleServer } from './console/server.js';
import { registerManagementCors } from './console/management-cors.js';
import { consoleOriginFor, originOn, type PlatformPorts } from './console/origins.js';
import { registerNodeLifecycle, type NodeLifecycle } from './platform/node-lifecycle.js';
import { startRealtime, type RealtimeServer } from './realtime/index.js';
import { createServices, platformParts, type PlatformServices } from './services.js';

/**
 * The API server. The console is not on it (its own origin: console/server.ts); `ports` says where
 * it is, for the Management API's CORS and the redirect of `GET /` (none: no console). `services`:
 * the platform's (src/services.ts), built here when not given.
 */
export async function buildServer(
  platform: Platform,
  ports: PlatformPorts = { api: platform.config.port },
  services: PlatformServices = createServices(platform),
): Promise<FastifyInstance> {
  return (await buildApiServer(platform, ports, services)).app;
}

interface ApiServer {
  app: FastifyInstance;
  /** GET /ready and the drain on SIGTERM. */
  lifecycle: NodeLifecycle;
  /** GraphQL subscriptions on this node. */
  realtime: RealtimeServer;
  /** The functions runtime (closed with the app). */
  functions: EdgeFunctions;
}

async function buildApiServer(
  platform: Platform,
  ports: PlatformPorts,
  services: PlatformServices,
): Promise<ApiServer> {
  const app = Fastify({
    logger: platform.config.logRequests ? { level: 'info' } : false,
    bodyLimit: platform.config.bodyLimit,
    rewriteUrl: (req) => rewriteProjectUrl(req),
    trustProxy: false,
    forceCloseConnections: true,
    frameworkErrors: sendFrameworkError,
  });
  registerProjectRouting(app, platform);
  registerNetworkGuard(app, services.bans);
  registerManagementCors(app, ports);
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
  const lifecycle = registerNodeLifecycle(app, platform, services.storageProbe);
  // Subscriptions on {project}/graphql/v1 (src/realtime/): WebSocket upgrades, and event streams
  // through a preHandler of the GraphQL route (so before it); closed before the server.
  const realtime = startRealtime(app, platform, services.bans);
  await app.register(graphqlRoutes, { platform });
  await app.register(storageRoutes, { platform, prefix: '/storage/v1' });
  const functions = createEdgeFunctions(platform, app.server);
  await app.register(managementRoutes, { platform, services: services.management, functions, prefix: '/v1' });
  await registerFunctions(app, platform, functions);
  registerRestNotServed(app);
  // The console used to be here: its address now leads to the console's own origin.
  app.get('/', async (req, reply) => {
    const consoleOrigin = consoleOriginFor(ports, req.headers.host);
    if (consoleOrigin === undefined) return reply.code(404).send({ message: 'No console on this server' });
    return reply.redirect(`${consoleOrigin}/`, 302);
  });
  return { app, lifecycle, realtime, functions };
}

function listeningPort(server: FastifyInstance, asked: number): number {
  const addr = server.server.address();
  return typeof addr === 'object' && addr ? addr.port : asked;
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
  /** The services built once for the platform (network bans, the Management API's...). */
  services: PlatformServices;
  app: FastifyInstance;
  /** http://host:port of the HTTP server. */
  url: string;
  port: number;
  /** http://host:port of the console (its own origin), or undefined when it is off. */
  consoleUrl: string | undefined;
  /** GraphQL subscriptions (live queries) on this node. */
  realtime: RealtimeServer;
  /** The Edge Functions runtime of this node (its workers, its catalog of deployed functions). */
  functions: EdgeFunctions;
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
  const platform = await Platform.start(config, { ...platformParts(config), ...options });
  const services = createServices(platform);
  const ports: PlatformPorts = { api: config.port };
  const { app, lifecycle, realtime, functions } = await buildApiServer(platform, ports, services).catch(
    async (err: unknown) => {
      await platform.close();
      throw err;
    },
  );
  // One-time console login links: issued here, redeemed by the console.
  const logins = new ConsoleLoginTokens();
  let consoleApp: FastifyInstance | undefined;
  try {
    await app.listen({ host: config.host, port: config.port });
    ports.api = listeningPort(app, config.port);
    if (config.consolePort !== undefined) {
      consoleApp = await buildConsoleServer({ logins, ports, logRequests: config.logRequests });
      await consoleApp.listen({ host: config.host, port: config.consolePort }).catch((err: unknown) => {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        throw new Error(
          `The console's port ${config.consolePort} is in use: choose another with STRATA_CONSOLE_PORT or --console-port (0 = any free port, off = no console)`,
        );
      });
      ports.console = listeningPort(consoleApp, config.consolePort);
    }
  } catch (err) {
    await consoleApp?.close().catch(() => {});
    await app.close().catch(() => {});
    await platform.close();
    throw err;
  }
  const pooler = await startPooler(platform, services.bans, options.log ?? ((line) => console.warn(line)));
  const port = ports.api;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const consoleUrl = ports.console === undefined ? undefined : originOn(host, ports.console);
  let closed = false;
  return {
    platform,
    services,
    app,
    url: originOn(host, port),
    port,
    realtime,
    functions,
    consoleUrl,
    consoleLoginUrl: (accessToken) => {
      if (consoleUrl === undefined) throw new Error('The console is off (STRATA_CONSOLE_PORT=off)');
      return `${consoleUrl}/#login=${logins.issue(accessToken)}`;
    },
    async close(opts = {}) {
      if (closed) return;
      closed = true;
      if (opts.graceMs) await lifecycle.drain(opts.graceMs);
      await pooler?.close();
      await consoleApp?.close().catch(() => {});
      await app.close().catch(() => {});
      await platform.close();
    },
  };
}
