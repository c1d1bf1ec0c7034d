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
    const { rows } = await this.platform.pool.query<{ count: number; reset_ms: string }>(
      `insert into rate_limit_counters as c (key, window_start, window_ms, count) values ($1, clock_timestamp(), $2, 1)
       on conflict (key) do update set
         window_start = case when c.window_start + make_interval(secs => c.window_ms / 1000.0) <= clock_timestamp() or c.window_ms <> $2
                             then clock_timestamp() else c.window_start end,
         count = case when c.window_start + make_interval(secs => c.window_ms / 1000.0) <= clock_timestamp() or c.window_ms <> $2
                      then 1 else c.count + 1 end,
         window_ms = $2
       returning count, extract(epoch from (window_start + make_interval(secs => window_ms / 1000.0) - clock_timestamp())) * 1000 as reset_ms`,
      [key, windowMs],
    );
    const [row] = rows;
    if (!row) throw new Error('the rate-limit upsert returned no row');
    if (++this.hits % 500 === 0) {
      this.platform.pool
        .query(
          `delete from rate_limit_counters where window_start + make_interval(secs => window_ms / 1000.0) < now() - interval '1 hour'`,
        )
        .catch(() => {});
    }
    return {
      limit: max,
      remaining: Math.max(0, max - row.count),
      resetSeconds: Math.max(0, Math.ceil(Number(row.reset_ms) / 1000)),
      exceeded: row.count > max,
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
