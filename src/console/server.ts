/** The console's own HTTP server (its own port, so its own origin: docs/security/origins.md). */
import Fastify, { type FastifyInstance } from 'fastify';
import type { ConsoleLoginTokens } from './login-tokens.js';
import type { PlatformPorts } from './origins.js';
import { consoleRoutes } from './plugin.js';

export async function buildConsoleServer(opts: {
  logins: ConsoleLoginTokens;
  ports: PlatformPorts;
  logRequests: boolean;
}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logRequests ? { level: 'info' } : false,
    bodyLimit: 64 * 1024,
    trustProxy: false,
    forceCloseConnections: true,
  });
  await app.register(consoleRoutes, { logins: opts.logins, ports: opts.ports });
  return app;
}
