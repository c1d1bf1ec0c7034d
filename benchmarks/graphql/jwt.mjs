// HS256 JWTs with node:crypto only: minting the benchmark's tokens, and the verification used by
// the PostGraphile and floor servers (signature + exp, as a minimal honest auth step).
import { createHmac, timingSafeEqual } from 'node:crypto';

const b64url = (buf) => Buffer.from(buf).toString('base64url');

export function signHS256(secret, claims) {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64url(JSON.stringify(claims));
  const sig = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${sig}`;
}

/** Returns the claims, or throws. */
export function verifyHS256(secret, token) {
  const parts = token.split('.');
  if (parts.length !== 3) throw new Error('malformed JWT');
  const head = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
  if (head.alg !== 'HS256') throw new Error('algorithm not allowed');
  const expected = createHmac('sha256', secret).update(`${parts[0]}.${parts[1]}`).digest();
  const got = Buffer.from(parts[2], 'base64url');
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) throw new Error('invalid signature');
  const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  if (typeof claims.exp === 'number' && claims.exp < Date.now() / 1000) throw new Error('JWT expired');
  return claims;
}

/** apikey must verify (any role); a Bearer token, when present, decides the role. */
export function principalFromHeaders(secret, headers) {
  const apikey = headers.apikey;
  if (!apikey) throw new Error('No API key found in request');
  const keyClaims = verifyHS256(secret, apikey);
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  const claims = m && m[1] !== apikey ? verifyHS256(secret, m[1]) : keyClaims;
  const role = claims.role ?? 'anon';
  if (!['anon', 'authenticated', 'service_role'].includes(role))
    throw new Error(`role "${role}" is not allowed`);
  return { role, claims };
}

/** The benchmark's keys: anon apikey and the user token of account 7 (role authenticated). */
export function benchTokens(secret, userId) {
  const iat = 1700000000;
  const exp = iat + 20 * 365 * 24 * 3600;
  return {
    anonKey: signHS256(secret, { iss: 'strata-bench', role: 'anon', iat, exp }),
    userToken: signHS256(secret, {
      iss: 'strata-bench',
      role: 'authenticated',
      sub: userId,
      aud: 'authenticated',
      iat,
      exp,
    }),
  };
}
