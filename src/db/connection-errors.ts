/**
 * Which failures mean "the database cannot be reached right now" (as opposed to "this query is
 * wrong"): refused or reset connections, a server shutting down, crashing or still starting, and
 * the driver's "Connection terminated" family. Every API answers these with 503 in its own error
 * shape and a fixed message; the driver's text (ECONNREFUSED 127.0.0.1:...) never reaches a client.
 */

/** The message every API uses for it. */
export const DATABASE_UNAVAILABLE_MESSAGE = 'The database is unavailable at the moment; retry the request';

/** …and when the database is fine but every pooled connection stayed in use for the whole wait. */
export const DATABASE_BUSY_MESSAGE =
  'The database is busy: every connection for this project stayed in use; retry the request';

/** Seconds a client is told to wait (Retry-After). */
export const DATABASE_RETRY_AFTER_SECONDS = 1;

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

const SERVER_CODES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, in recovery)
  '57P05', // idle_session_timeout
]);

// The driver's own messages for a connection that went away or could not be made.
const DRIVER_MESSAGES =
  /Connection terminated|connection timeout|^timeout expired$|Client has encountered a connection error|Client was closed and is not queryable|the database system is (starting up|shutting down|in recovery mode)/i;

// pg-pool's words for a checkout that waited in its queue (pool full) past the timeout; a new
// connection that timed out is "Connection terminated due to connection timeout" instead.
const POOL_WAIT_MESSAGE = /^timeout exceeded when trying to connect$/;

/** True when every pooled connection stayed busy while `err`'s request waited for one. */
export function isPoolSaturated(err: unknown): boolean {
  return err instanceof Error && POOL_WAIT_MESSAGE.test(err.message);
}

/** The client-facing message for an error `isDatabaseUnavailable` accepts. */
export function unavailableMessage(err: unknown): string {
  return isPoolSaturated(err) ? DATABASE_BUSY_MESSAGE : DATABASE_UNAVAILABLE_MESSAGE;
}

/**
 * True when `err` (or an error it wraps) says the database is unreachable or going away, or (see
 * isPoolSaturated) too busy to lend a connection in time: each is a 503 with Retry-After.
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  if (isPoolSaturated(err)) return true;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code && (NETWORK_CODES.has(code) || SERVER_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)))
    return true;
  // A SQLSTATE other than those is the server answering: reachable.
  if (code && /^[0-9A-Z]{5}$/.test(code)) return false;
  if (typeof e.message === 'string' && DRIVER_MESSAGES.test(e.message)) return true;
  // AggregateError (a host resolving to several addresses), wrapped causes.
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnavailable(x, depth + 1))) return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}
