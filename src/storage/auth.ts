/**
 * Who a Storage request runs as. The token comes from `Authorization: Bearer`, else the
 * `authorization` query parameter (with or without "Bearer "), else the `apikey` header. Verified
 * with the project's JWT secret (HS256 only, src/auth/jwt.ts); failures use the verifier texts of
 * the reference (supabase/storage's JWT and apikey handling).
 */
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../db/with-role.js';
import { JwtError, verifyJwt } from '../auth/jwt.js';
import { apiKeyOf, bearerOf } from '../auth/request-credentials.js';
import type { ProjectContext } from '../platform/project-context.js';
import { errors } from './errors.js';

export interface Caller extends Principal {
  /** `sub` of the JWT, when there is one. */
  sub?: string;
}

export const SERVICE: Caller = { role: 'service_role', claims: { role: 'service_role' } };
export const ANON: Caller = { role: 'anon', claims: { role: 'anon' } };

function tokenOf(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  if (typeof header === 'string' && header.trim() !== '') return bearerOf(req.headers) ?? header.trim();
  const q = (req.query as Record<string, unknown> | undefined)?.authorization;
  if (typeof q === 'string' && q.trim() !== '') return q.trim().replace(/^bearer\s+/i, '');
  return apiKeyOf(req.headers);
}

/** The verifier's text for a refused token, as jose words it. */
export function verifierText(err: JwtError): string {
  switch (err.reason) {
    case 'expired':
      return '"exp" claim timestamp check failed';
    case 'invalid_signature':
      return 'signature verification failed';
    case 'malformed':
      return err.message.replace(/^invalid JWT: /, '') || 'Invalid Compact JWS';
    default:
      return err.message;
  }
}

async function verify(project: ProjectContext, token: string): Promise<Caller> {
  try {
    const claims = await verifyJwt(project.jwtSecret, token);
    const sub = typeof claims.sub === 'string' ? claims.sub : undefined;
    return { role: claims.role, claims, sub };
  } catch (err) {
    if (err instanceof JwtError) throw errors.accessDenied(verifierText(err));
    throw err;
  }
}

/** Routes that require credentials: missing → 400 validation error, bad → AccessDenied. */
export async function requireCaller(req: FastifyRequest, project: ProjectContext): Promise<Caller> {
  const token = tokenOf(req);
  if (!token) throw errors.invalidRequest("headers must have required property 'authorization'");
  return verify(project, token);
}

/**
 * Optional-auth routes: a missing token means anonymous; a token that is there but invalid (bad
 * signature, expired, another project's) is refused like on every other route that reads one,
 * never downgraded to anonymous. (The public and signed routes do not read a token at all.)
 */
export async function optionalCaller(
  req: FastifyRequest,
  project: ProjectContext,
): Promise<{ caller: Caller; authenticated: boolean }> {
  const token = tokenOf(req);
  if (!token) return { caller: ANON, authenticated: false };
  return { caller: await verify(project, token), authenticated: true };
}

export function isServiceRole(caller: Caller): boolean {
  return caller.role === 'service_role';
}

/** `owner` column: the sub when it is a UUID. */
export function ownerUuid(caller: Caller): string | null {
  return caller.sub && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(caller.sub)
    ? caller.sub
    : null;
}
