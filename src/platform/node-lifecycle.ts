/**
 * A node's life as a load balancer sees it (docs/cluster.md):
 * - GET /ready: 200 while the platform database (the primary server) and, with the S3 backend, the
 *   bucket answer; 503 once shutdown began or while either does not. A balancer stops sending new
 *   requests on 503. The other database servers are reported but do not make a node unready: one
 *   down affects only its projects (which answer 503), on every node alike.
 *   (GET /health stays the platform database's health.)
 * - drain(): stops accepting connections, closes idle keep-alive ones, and waits until in-flight
 *   requests (uploads included) have finished or `graceMs` passed; the caller then closes the app.
 */
import type { FastifyInstance } from 'fastify';
import type { Platform } from './platform.js';

/** 'up' / 'down' of the object store the node depends on, or 'none' when it depends on none. */
export type StorageProbe = () => Promise<'up' | 'down' | 'none'>;

export interface NodeLifecycle {
  readonly draining: boolean;
  drain(graceMs: number): Promise<void>;
}

/** `storageUp`: the object store's health (storage/backend/s3-probe.ts), part of /ready. */
export function registerNodeLifecycle(
  app: FastifyInstance,
  platform: Platform,
  storageUp: StorageProbe,
): NodeLifecycle {
  const inFlight = new Set<object>();
  let draining = false;
  // Callback hooks, not async ones: they run on every request, and an async hook costs a promise each.
  app.addHook('onRequest', (req, _reply, done) => {
    inFlight.add(req.raw);
    done();
  });
  app.addHook('onResponse', (req, _reply, done) => {
    inFlight.delete(req.raw);
    done();
  });
  app.addHook('onRequestAbort', (req, done) => {
    inFlight.delete(req.raw);
    done();
  });

  app.get('/ready', async (_req, reply) => {
    if (draining) return reply.code(503).send({ status: 'draining' });
    const ids = platform.servers.all().map((s) => s.id);
    const [dbs, storage] = await Promise.all([
      Promise.all(ids.map((id) => platform.health.isUp(id))),
      storageUp(),
    ]);
    const databases = Object.fromEntries(ids.map((id, i) => [id, dbs[i] ? 'up' : 'down']));
    const ok = databases[platform.servers.primary.id] === 'up' && storage !== 'down';
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable', databases, storage });
  });

  return {
    get draining() {
      return draining;
    },
    async drain(graceMs: number) {
      draining = true;
      if (!app.server.listening) return;
      app.server.close();
      app.server.closeIdleConnections();
      const until = Date.now() + graceMs;
      // The /ready answers and this request's own count settle within a tick; wait for the rest.
      while (inFlight.size > 0 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 25));
        app.server.closeIdleConnections();
      }
    },
  };
}
