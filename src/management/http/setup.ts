/**
 * Wires the management infrastructure into the `/v1` scope: JSON parsing that tolerates empty
 * bodies, `{"message"}` errors, PAT authentication, rate limiting and the `:ref` / `:slug` access
 * checks. Hooks run in this order for every route registered inside the scope:
 *   onRequest     → personal access token → req.management (401 {"message":"Unauthorized"} otherwise;
 *                   unauthenticated calls are rate-limited by client IP first)
 *   preValidation → rate limit (per caller, scope, endpoint; the body is parsed so a route's scope
 *                   function may read it) → req.managedProject / req.managedOrganization
 */
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../../platform/platform.js';
import './route-config.js';
import { registerErrorHandling, ApiError, unauthorized } from './errors.js';
import { bearerTokenOf, callerOfToken } from './auth.js';
import { applyRateLimit, RateLimiter } from './rate-limit.js';
import { resolvePathResources } from './project-access.js';

export function registerManagementHttp(app: FastifyInstance, platform: Platform): void {
  registerErrorHandling(app);
  registerLenientJson(app);
  app.decorateRequest('management', undefined);
  app.decorateRequest('managedProject', undefined);
  app.decorateRequest('managedOrganization', undefined);
  const limiter = new RateLimiter(platform);

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
    await applyRateLimit(platform, limiter, req, reply, req.management.userId);
    await resolvePathResources(platform, req);
  });
}

/** Refuses `__proto__` and `constructor.prototype` keys, as Fastify's own JSON parser does. */
function safeReviver(key: string, value: unknown): unknown {
  if (
    key === '__proto__' ||
    (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)
  ) {
    throw new ApiError(400, 'Request body contains a forbidden property name');
  }
  return value;
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
