/**
 * Failures that say "try again" rather than "your request is wrong": the database restarting or
 * unreachable, serialization failures, and the engine's own objects missing for a moment while
 * they are reinstalled (extension upgrade). They are answered 503 with Retry-After.
 */

import { isDatabaseUnavailable, unavailableMessage } from '../../db/connection-errors.js';

// SQLSTATE classes and codes.
const TRANSIENT_CLASSES = ['08', '53', '57']; // connection exception, insufficient resources, operator intervention
const TRANSIENT_CODES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);
// Missing objects are transient only when they are the engine's own (schema `graphql`), being reinstalled.
const ENGINE_OBJECT_CODES = new Set([
  '3F000', // invalid_schema_name
  '42883', // undefined_function
  '42P01', // undefined_table
  'XX000', // internal_error: "cache lookup failed" while objects are swapped
]);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** A client-facing message when `err` is transient, else undefined. */
export function transientFailure(err: unknown): string | undefined {
  if (!err || typeof err !== 'object') return undefined;
  // The database unreachable or going away: one message for every API, no driver text.
  if (isDatabaseUnavailable(err)) return unavailableMessage(err);
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : '';
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return 'The database is unreachable at the moment; retry the request';
    if (
      /^[0-9A-Z]{5}$/.test(code) &&
      (TRANSIENT_CODES.has(code) || TRANSIENT_CLASSES.includes(code.slice(0, 2)))
    ) {
      return `The GraphQL API is temporarily unavailable (${message}); retry the request`;
    }
    if (
      ENGINE_OBJECT_CODES.has(code) &&
      (/\bgraphql\b/.test(message) || /cache lookup failed/.test(message))
    ) {
      return `The GraphQL API is being updated (${message}); retry the request`;
    }
  }
  if (/Connection terminated/i.test(message)) {
    return 'The database connection was interrupted; retry the request';
  }
  return undefined;
}
