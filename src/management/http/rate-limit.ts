/**
 * Rate limiting per (caller, scope, endpoint), fixed windows, counted in the platform database so
 * that several API processes share one budget. Caller = user id (all tokens of a user share it),
 * or `ip:<address>` before authentication. Scope = the project (`:ref`), the organization
 * (`:slug`), a route's own choice (`config.managementRateLimit.scope`), or the caller.
 * Every limited response carries X-RateLimit-Limit / -Remaining / -Reset (seconds until the window
 * resets); past the limit the answer is 429 {"message":"Too many requests"} with `Retry-After` (the
 * same seconds, at least 1) for the rest of the window. An authenticated caller's counters never
 * share anything with the per-IP counter of unauthenticated calls, so a flood of bad or missing
 * tokens from one address cannot use up the budget of a valid token behind the same address.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Platform } from '../../platform/platform.js';
import { ApiError } from './errors.js';
import type { RateLimitPolicy } from './route-config.js';
import { countHit, pruneCounters } from './rate-limit-store.js';

export const RATE_LIMITED_MESSAGE = 'Too many requests';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets. */
  resetSeconds: number;
  exceeded: boolean;
}

export class RateLimiter {
  private hits = 0;
  constructor(private readonly platform: Platform) {}

  /** Counts one request against `key` and reports the window's state. */
  async hit(key: string, max: number, windowMs: number): Promise<RateLimitState> {
    const { count, resetMs } = await countHit(this.platform.pool, key, windowMs);
    // Counters of windows long over carry no information; keep the table small.
    if (++this.hits % 500 === 0) pruneCounters(this.platform.pool).catch(() => {});
    return {
      limit: max,
      remaining: Math.max(0, max - count),
      resetSeconds: Math.max(0, Math.ceil(resetMs / 1000)),
      exceeded: count > max,
    };
  }
}

function policyOf(req: FastifyRequest): RateLimitPolicy | false {
  return req.routeOptions.config?.managementRateLimit ?? {};
}

function defaultScope(req: FastifyRequest, identity: string): string {
  const params = (req.params ?? {}) as Record<string, string | undefined>;
  if (params.ref !== undefined) return `project:${params.ref}`;
  if (params.slug !== undefined) return `org:${params.slug}`;
  return `user:${identity}`;
}

/** Counts the request and sets the headers; throws 429 when the caller is over the limit. */
export async function applyRateLimit(
  platform: Platform,
  limiter: RateLimiter,
  req: FastifyRequest,
  reply: FastifyReply,
  identity: string,
  /** Fixed scope for unauthenticated calls (so path parameters cannot mint new counters). */
  fixedScope?: string,
): Promise<void> {
  const policy = policyOf(req);
  if (policy === false) return;
  const max = policy.max ?? platform.config.rateLimitMax;
  const windowMs = policy.windowMs ?? platform.config.rateLimitWindowMs;
  const scope = fixedScope ?? policy.scope?.(req) ?? defaultScope(req, identity);
  const endpoint = `${req.method} ${req.routeOptions.url ?? '*'}`;
  const state = await limiter.hit(JSON.stringify([identity, scope, endpoint]), max, windowMs);
  const headers = {
    'X-RateLimit-Limit': state.limit,
    'X-RateLimit-Remaining': state.remaining,
    'X-RateLimit-Reset': state.resetSeconds,
  };
  reply.headers(headers);
  if (state.exceeded)
    throw new ApiError(429, RATE_LIMITED_MESSAGE, {
      ...headers,
      'Retry-After': Math.max(1, state.resetSeconds),
    });
}
