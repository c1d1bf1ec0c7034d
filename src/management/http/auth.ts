/**
 * Personal access tokens: `Authorization: Bearer sbp_<40 hex>`; only the SHA-256 digest is
 * stored (access_tokens.token_sha256). The caller's user id lands on `req.management.userId`.
 */
import type { FastifyRequest } from 'fastify';
import { bearerOf } from '../../auth/request-credentials.js';
import type { Platform } from '../../platform/platform.js';
import { sha256Hex } from '../../platform/sha256.js';
import { unauthorized } from './errors.js';
import { liveTokenByDigest, touchToken } from './token-store.js';

/** The token shape the CLI accepts (`sbp_oauth_` is the OAuth variant). */
export const ACCESS_TOKEN_PATTERN = /^sbp_(oauth_)?[a-f0-9]{40}$/;

export interface ManagementCaller {
  userId: string;
  tokenId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller of a management request (set by the auth hook). */
    management?: ManagementCaller;
  }
}

/** The caller behind a bearer token, or undefined for a missing, malformed or unknown token. */
export async function callerOfToken(
  platform: Platform,
  token: string | undefined,
): Promise<ManagementCaller | undefined> {
  if (!token || !ACCESS_TOKEN_PATTERN.test(token)) return undefined;
  const digest = sha256Hex(token);
  const row = await liveTokenByDigest(platform.pool, digest);
  if (!row) return undefined;
  // last_used_at is informational: refreshed at most once a minute, off the request's path.
  if (row.stale) touchToken(platform.pool, row.id).catch(() => {});
  return { userId: row.user_id, tokenId: row.id };
}

/** The authenticated caller; throws 401 when the auth hook did not find one. */
export function callerOf(req: FastifyRequest): ManagementCaller {
  if (!req.management) throw unauthorized();
  return req.management;
}

export function bearerTokenOf(req: FastifyRequest): string | undefined {
  return bearerOf(req.headers);
}
