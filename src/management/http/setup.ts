/**
 * Wires the management infrastructure into the `/v1` scope: JSON parsing that tolerates empty
 * bodies, `{"message"}` errors, route schemas (schemas.ts), PAT authentication, rate limiting and the `:ref` / `:slug` access
 * checks. Hooks run in this order for every route registered inside the scope:
 *   onRequest     → personal access token → req.management (401 {"message":"Unauthorized"} otherwise;
 *                   unauthenticated calls are rate-limited by client IP first)
 *   preValidation → NUL characters in the path, query or body → 400; rate limit (per caller, scope,
 *                   endpoint; the body is parsed so a route's scope function may read it) →
 *                   req.managedProject / req.managedOrganization and the caller's role checked
 *                   against the route's row in permissions.ts (403 below it)
 *   validation    → the route's schema (params, body, querystring) → 400 worded by schema-errors.ts
 *   onSend        → a success of a route that never checked the caller's role becomes a 500
 * A route registered here without a row in permissions.ts stops the server from starting.
 */
import { wellFormedReviver } from '../../db/well-formed.js';
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../../platform/platform.js';
import './route-config.js';
import { registerErrorHandling, ApiError, newErrorEventId, unauthorized } from './errors.js';
import { bearerTokenOf, callerOfToken } from './auth.js';
import { applyRateLimit, RateLimiter } from './rate-limit.js';
import { resolvePathResources } from './project-access.js';
import { permissionOf, routeKey } from './permissions.js';
import { assertNoNul } from './nul-bytes.js';
import { registerSchemaValidation } from './schemas.js';

/**
 * `routeKeys` receives `METHOD /v1/path` of every management route registered in the scope
 * (management/services.ts keeps it; tests enumerate it).
 */
export function registerManagementHttp(
  app: FastifyInstance,
  platform: Platform,
  routeKeys: Set<string>,
): void {
  registerErrorHandling(app);
  registerSchemaValidation(app);
  registerLenientJson(app);
  app.decorateRequest('management', undefined);
  app.decorateRequest('managedProject', undefined);
  app.decorateRequest('managedOrganization', undefined);
  const limiter = new RateLimiter(platform);

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      const m = method === 'HEAD' ? 'GET' : method;
      if (!permissionOf(m, route.url ?? ''))
        throw new Error(
          `management route ${m} ${route.url} has no row in src/management/http/permissions.ts (who may call it?)`,
        );
      routeKeys.add(routeKey(m, route.url ?? ''));
    }
  });

  app.addHook('onRequest', async (req, reply) => {
    if (req.routeOptions.config?.managementPublic) return;
    const caller = await callerOfToken(platform, bearerTokenOf(req));
    if (!caller) {
      await applyRateLimit(platform, limiter, req, reply, `ip:${req.ip}`, 'unauthenticated');
      throw unauthorized();
    }
    req.management = caller;
    reply.header('x-gotrue-id', caller.userId);
  });

  app.addHook('preValidation', async (req, reply) => {
    if (!req.management) return;
    assertNoNul(req.params, 'path parameter ');
    assertNoNul(req.query, 'query parameter ');
    assertNoNul(req.body, '');
    // Per token (as issue #12 asks): an anonymous flood from the same address never spends it.
    await applyRateLimit(platform, limiter, req, reply, `token:${req.management.tokenId}`);
    await resolvePathResources(platform, req);
  });

  // Safety net behind the table: a route that answered a success without its role being checked.
  app.addHook('onSend', async (req, reply, payload) => {
    if (!req.management || req.roleChecked || reply.statusCode >= 400) return payload;
    const errorEventId = newErrorEventId();
    req.log.error({ errorEventId }, `management route ${req.routeOptions.url} answered without a role check`);
    console.error(
      `[management] ${req.method} ${req.routeOptions.url} answered without a role check (errorEventId ${errorEventId})`,
    );
    reply.code(500).type('application/json; charset=utf-8');
    reply.removeHeader('content-length');
    return JSON.stringify({ message: 'Internal Server Error', errorEventId });
  });
}

/**
 * Refuses `__proto__` and `constructor.prototype` keys, as Fastify's own JSON parser does; unpaired
 * surrogates become U+FFFD (db/well-formed.ts), so that an answer echoing the body says what was stored.
 */
function safeReviver(key: string, value: unknown): unknown {
  if (
    key === '__proto__' ||
    (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)
  ) {
    throw new ApiError(400, 'Request body contains a forbidden property name');
  }
  return wellFormedReviver(key, value);
}

/** JSON bodies as usual, but an empty body (clients that send a content type with no body) is `undefined`. */
function registerLenientJson(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text, safeReviver) as unknown);
    } catch (err) {
      done(err instanceof ApiError ? err : new ApiError(400, 'Request body is not valid JSON'), undefined);
    }
  });
}
