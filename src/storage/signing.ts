/**
 * Signed URL tokens: HS256 JWTs signed with the project's JWT secret carrying `url`
 * ("<bucket>/<key>", decoded), `scope` ("download" | "upload") and `exp`; upload tokens also carry
 * `upsert` and the signer's `owner`.
 */
import { Type } from '@sinclair/typebox';
import { JwtError, signJwt, verifyJwt } from '../auth/jwt.js';
import { verifierText } from './auth.js';
import { errors } from './errors.js';

/** Largest expiresIn accepted: beyond this `exp` would not fit a JWT sensibly. */
const MAX_EXPIRES_IN = 100 * 365 * 24 * 3600;

/** `expiresIn` of a signing request: a positive integer (the route schema), at most a century. */
export const ExpiresIn = Type.Integer({ minimum: 1 });

/** The reference refuses an `expiresIn` beyond its maximum with its own error, not a schema's. */
export function checkExpiresIn(n: number): number {
  if (n > MAX_EXPIRES_IN) throw errors.invalidParameter('expiresIn');
  return n;
}

export function signDownloadToken(
  secret: string,
  bucket: string,
  key: string,
  expiresIn: number,
  /** Image-render URLs carry the transformations they were signed for. */
  transformations?: string,
): Promise<string> {
  return signJwt(
    secret,
    { url: `${bucket}/${key}`, scope: 'download', ...(transformations ? { transformations } : {}) },
    { expiresInSeconds: expiresIn },
  );
}

export function signUploadToken(
  secret: string,
  bucket: string,
  key: string,
  opts: { owner?: string; upsert: boolean; expiresIn: number },
): Promise<string> {
  const claims: Record<string, unknown> = { upsert: opts.upsert };
  if (opts.owner) claims.owner = opts.owner;
  return signJwt(
    secret,
    { ...claims, url: `${bucket}/${key}`, scope: 'upload' },
    { expiresInSeconds: opts.expiresIn },
  );
}

export interface VerifiedToken {
  url: string;
  exp?: number;
  owner?: string;
  upsert: boolean;
  /** Set on image-render tokens. */
  transformations?: string;
}

/** Signature/format/expiry, then kind, then path binding, then expiry again (GET /object/sign/{bucket}/{key}). */
export async function verifyUrlToken(
  secret: string,
  token: string,
  kind: 'download' | 'upload',
  bucket: string,
  key: string,
): Promise<VerifiedToken> {
  let claims: Record<string, unknown>;
  try {
    claims = await verifyJwt(secret, token);
  } catch (err) {
    if (err instanceof JwtError) {
      if (err.reason === 'bad_role') throw errors.invalidJwt(err.message);
      throw errors.invalidJwt(verifierText(err));
    }
    throw err;
  }
  const scope = claims.scope;
  const okKind =
    scope === kind ||
    (scope === undefined &&
      (kind === 'download' ? claims.upsert === undefined : claims.upsert !== undefined));
  if (!okKind) throw errors.invalidSignature(`Token is not scoped for ${kind}`);
  if (typeof claims.url !== 'string' || claims.url !== `${bucket}/${key}`) throw errors.invalidSignature();
  const exp = typeof claims.exp === 'number' ? claims.exp : undefined;
  if (exp !== undefined && exp * 1000 < Date.now()) throw errors.expiredToken();
  return {
    url: claims.url,
    exp,
    owner: typeof claims.owner === 'string' ? claims.owner : undefined,
    upsert: claims.upsert === true,
    transformations: typeof claims.transformations === 'string' ? claims.transformations : undefined,
  };
}
