/**
 * The Management API (`/v1`) in browsers: only the console's origin may call it, cross-origin with
 * its `Authorization` header (CORS: that origin echoed, preflights answered). A request carrying
 * any other `Origin` (another site, `null` from sandboxed user content, the API origin itself,
 * where user content lives) is refused with 403 before any route runs. Clients that are not
 * browsers send no Origin and are not concerned.
 */
import type { FastifyInstance } from 'fastify';
import { consoleOriginFor, type PlatformPorts } from './origins.js';

const MANAGEMENT_PATH = /^\/v1(?=[/?]|$)/;
const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const ALLOW_HEADERS = 'authorization, content-type, x-client-info';

export function registerManagementCors(app: FastifyInstance, ports: PlatformPorts): void {
  // A callback hook (it runs on every request; an async one costs a promise each): it either
  // answers (and does not call `done`) or calls `done`.
  app.addHook('onRequest', (req, reply, done) => {
    if (!MANAGEMENT_PATH.test(req.url)) return done();
    const origin = req.headers.origin;
    if (origin === undefined) return done();
    reply.header('vary', 'Origin');
    const allowed = consoleOriginFor(ports, req.headers.host);
    if (origin !== allowed) {
      reply.code(403).send({
        message: 'The Management API accepts browser requests only from the console origin',
      });
      return;
    }
    reply.header('access-control-allow-origin', origin);
    if (req.method !== 'OPTIONS') return done();
    reply
      .code(204)
      .header('access-control-allow-methods', ALLOW_METHODS)
      .header('access-control-allow-headers', ALLOW_HEADERS)
      .header('access-control-max-age', '600')
      .send();
  });
}
