/** Ops endpoints (`/status`, `/version`) and CORS for browser clients. */
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../../platform/platform.js';
import { errors } from '../errors.js';

export const STORAGE_API_VERSION = 'strata-storage 1.0.0 (supabase storage v1.70.6 compatible)';

const ALLOW_HEADERS =
  'authorization, apikey, content-type, x-client-info, x-upsert, x-metadata, cache-control, range, if-none-match, if-modified-since, x-robots-tag, content-encoding';
const EXPOSE_HEADERS =
  'etag, content-range, content-length, content-disposition, content-type, last-modified, cache-control, expires';

/** Adds the CORS reply headers to every route of `app` (call it directly, not as a plugin). */
export function registerCors(app: FastifyInstance): void {
  app.addHook('onRequest', async (req, reply) => {
    if (req.headers.origin) {
      reply.header('access-control-allow-origin', '*');
      reply.header('access-control-expose-headers', EXPOSE_HEADERS);
    }
  });
}

export async function opsRoutes(app: FastifyInstance, opts: { platform: Platform }): Promise<void> {
  const { platform } = opts;
  app.options('/*', async (_req, reply) => {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-allow-methods', 'GET, HEAD, POST, PUT, DELETE, OPTIONS');
    reply.header('access-control-allow-headers', ALLOW_HEADERS);
    reply.header('access-control-max-age', '86400');
    return reply.code(204).send();
  });
  app.get('/status', async (_req, reply) => reply.code(200).send());
  // Healthy while the project's database answers; a 503 in the storage error shape while it does not.
  app.get('/health', async (req) => {
    const up = await platform.health.isUp(req.project?.dbServer);
    if (!up) throw errors.databaseUnavailable();
    return { healthy: true };
  });
  app.get('/version', async (_req, reply) =>
    reply.type('text/plain; charset=utf-8').send(STORAGE_API_VERSION),
  );
}
