/**
 * The platform's HTTP server: one Fastify app; requests are routed to a project by path prefix or
 * Host (see platform/routing.ts), then to the GraphQL, Storage or Management area.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { StrataConfig } from './config.js';
import { Platform, type PlatformOptions } from './platform/platform.js';
import { registerProjectRouting, rewriteProjectUrl } from './platform/routing.js';
import { graphqlRoutes } from './graphql/http/fastify-route.js';
import { storageRoutes } from './storage/index.js';
import { managementRoutes } from './management/index.js';
import { projectBootstrapHooks } from './platform/bootstrap-hooks.js';
import { registerNetworkGuard } from './platform/network-guard.js';
import { startPooler } from './platform/pooler.js';

export async function buildServer(platform: Platform): Promise<FastifyInstance> {
  const app = Fastify({
    logger: platform.config.logRequests ? { level: 'info' } : false,
    bodyLimit: platform.config.bodyLimit,
    rewriteUrl: (req) => rewriteProjectUrl(req),
    trustProxy: false,
    forceCloseConnections: true,
  });
  registerProjectRouting(app, platform);
  registerNetworkGuard(app, platform);
  app.get('/health', async () => ({ status: 'ok' }));
  await app.register(graphqlRoutes, { platform });
  await app.register(storageRoutes, { platform, prefix: '/storage/v1' });
  await app.register(managementRoutes, { platform, prefix: '/v1' });
  return app;
}

export interface RunningPlatform {
  platform: Platform;
  app: FastifyInstance;
  /** http://host:port of the HTTP server. */
  url: string;
  port: number;
  close(): Promise<void>;
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
    async close() {
      if (closed) return;
      closed = true;
      await pooler?.close();
      await app.close().catch(() => {});
      await platform.close();
    },
  };
}
