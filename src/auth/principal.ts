/** Turns a project request's apikey and bearer token into the Principal it runs as. */
import type { Principal } from '../db/with-role.js';
import { JwtError, verifyJwt } from './jwt.js';

export interface ProjectKeys {
  jwtSecret: string;
  anonKey: string;
  serviceRoleKey: string;
}

export class AuthError extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
    this.name = 'AuthError';
  }
}

/** The apikey must be the project's anon or service_role key (or any valid JWT of the project). */
export async function checkApiKey(keys: ProjectKeys, apiKey: string | undefined): Promise<Principal> {
  if (!apiKey) throw new AuthError('No API key found in request', 'missing_api_key');
  if (apiKey === keys.anonKey) return { role: 'anon', claims: { role: 'anon' } };
  if (apiKey === keys.serviceRoleKey) return { role: 'service_role', claims: { role: 'service_role' } };
  try {
    const claims = await verifyJwt(keys.jwtSecret, apiKey);
    return { role: claims.role, claims };
  } catch (err) {
    throw new AuthError('Invalid API key', err instanceof JwtError ? err.reason : 'invalid_api_key');
  }
}

/** A bearer JWT decides the role; without one the apikey's role applies. */
export async function principalOf(
  keys: ProjectKeys,
  apiKey: string | undefined,
  bearer: string | undefined,
): Promise<Principal> {
  const fromKey = await checkApiKey(keys, apiKey);
  if (!bearer || bearer === apiKey) return fromKey;
  try {
    const claims = await verifyJwt(keys.jwtSecret, bearer);
    return { role: claims.role, claims };
  } catch (err) {
    throw new AuthError(
      err instanceof Error ? err.message : 'invalid JWT',
      err instanceof JwtError ? err.reason : 'invalid_jwt',
    );
  }
}
