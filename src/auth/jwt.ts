/** HS256 JWTs: the project's API keys and user tokens, minted and checked with jose. */
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

export const DEFAULT_ALLOWED_ROLES = ['anon', 'authenticated', 'service_role'] as const;

export class JwtError extends Error {
  constructor(
    message: string,
    /** A short machine-readable reason: expired, invalid_signature, malformed, bad_role, ... */
    readonly reason: string,
  ) {
    super(message);
    this.name = 'JwtError';
  }
}

export type Claims = Record<string, unknown> & { role?: string; sub?: string; exp?: number };

/** A new random secret for a project (base64url, 48 bytes of entropy). */
export function newJwtSecret(): string {
  return randomBytes(48).toString('base64url');
}

// One KeyObject per secret: jose then skips importing the key on every call.
const keys = new Map<string, KeyObject>();
function keyOf(secret: string): KeyObject {
  let k = keys.get(secret);
  if (!k) {
    if (keys.size > 1000) keys.clear();
    k = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, k);
  }
  return k;
}

/**
 * Tokens already verified with a given secret, until min(exp, 60 s after the check): the same token
 * string always verifies the same way, so a hit skips the HMAC. Bounded; cleared when full.
 */
const verified = new Map<string, Map<string, { claims: Claims & { role: string }; until: number }>>();
let verifiedCount = 0;
const VERIFIED_MAX = 10_000;
const VERIFIED_TTL_MS = 60_000;

/** A still valid cache entry of this token under this secret (keyed by secret, then token: no key string built). */
function cachedClaims(secret: string, token: string): { claims: Claims & { role: string } } | undefined {
  const hit = verified.get(secret)?.get(token);
  return hit && hit.until > Date.now() ? hit : undefined;
}

/**
 * True when this token verified with this secret recently (see `verified`) and its role is
 * allowed: a synchronous check for hot paths that need no claims; false means "call verifyJwt".
 */
export function verifiedRecently(
  secret: string,
  token: string,
  allowedRoles: readonly string[] = DEFAULT_ALLOWED_ROLES,
): boolean {
  const hit = cachedClaims(secret, token);
  return hit !== undefined && allowedRoles.includes(hit.claims.role);
}

export async function signJwt(
  secret: string,
  claims: Claims,
  opts: { expiresInSeconds?: number } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload: Claims = { iat: now, ...claims };
  if (opts.expiresInSeconds !== undefined && payload.exp === undefined)
    payload.exp = now + opts.expiresInSeconds;
  return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(keyOf(secret));
}

/** The long-lived anon / service_role keys of a project, shaped like the reference platform's. */
export function mintApiKey(secret: string, role: 'anon' | 'service_role', ref: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signJwt(secret, { iss: 'supabase', ref, role, iat: now, exp: now + 10 * 365 * 24 * 3600 });
}

/**
 * Verifies signature (HS256 only, so `alg: none` and other algorithms are refused), expiry and the
 * role claim. A token without a role acts as `anon`.
 */
export async function verifyJwt(
  secret: string,
  token: string,
  allowedRoles: readonly string[] = DEFAULT_ALLOWED_ROLES,
): Promise<Claims & { role: string }> {
  const hit = cachedClaims(secret, token);
  if (hit) {
    if (!allowedRoles.includes(hit.claims.role))
      throw new JwtError(`invalid JWT: role "${hit.claims.role}" is not allowed`, 'bad_role');
    return { ...hit.claims };
  }
  const claims = await verifyUncached(secret, token, allowedRoles);
  const until = Math.min(
    Date.now() + VERIFIED_TTL_MS,
    typeof claims.exp === 'number' ? claims.exp * 1000 : Infinity,
  );
  if (verifiedCount >= VERIFIED_MAX) {
    verified.clear();
    verifiedCount = 0;
  }
  let bySecret = verified.get(secret);
  if (!bySecret) {
    bySecret = new Map();
    verified.set(secret, bySecret);
  }
  if (!bySecret.has(token)) verifiedCount++;
  bySecret.set(token, { claims, until });
  return { ...claims };
}

async function verifyUncached(
  secret: string,
  token: string,
  allowedRoles: readonly string[],
): Promise<Claims & { role: string }> {
  let payload: Claims;
  try {
    ({ payload } = (await jwtVerify(token, keyOf(secret), { algorithms: ['HS256'] })) as { payload: Claims });
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw new JwtError('JWT expired', 'expired');
    if (err instanceof joseErrors.JWSSignatureVerificationFailed)
      throw new JwtError('invalid JWT: signature verification failed', 'invalid_signature');
    if (err instanceof joseErrors.JOSEAlgNotAllowed)
      throw new JwtError('invalid JWT: algorithm not allowed', 'bad_algorithm');
    throw new JwtError(`invalid JWT: ${err instanceof Error ? err.message : 'malformed token'}`, 'malformed');
  }
  const role = payload.role === undefined ? 'anon' : payload.role;
  if (typeof role !== 'string' || !allowedRoles.includes(role)) {
    throw new JwtError(`invalid JWT: role "${String(role)}" is not allowed`, 'bad_role');
  }
  return { ...payload, role };
}
