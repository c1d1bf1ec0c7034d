/**
 * Who an S3 request runs as (the reference's signature-v4 plugin):
 * - session-token mode: access key id = the project ref, secret = the project ref or its anon key,
 *   `x-amz-security-token` = a JWT of the project (a user's access token, or the anon key), which
 *   becomes the caller, so RLS applies exactly as on the REST API;
 * - access-key mode: a key created through the Management API; the caller is the service role.
 * The signature is checked first; the session token is verified as a JWT after it.
 */
import type { FastifyRequest } from 'fastify';
import { JwtError, verifyJwt } from '../../auth/jwt.js';
import type { Platform } from '../../platform/platform.js';
import type { ProjectContext } from '../../platform/project-context.js';
import { SERVICE, verifierText, type Caller } from '../auth.js';
import { accessKeySecret } from './credentials.js';
import { s3Errors } from './errors.js';
import {
  type ChunkVerifier,
  type ClientSignature,
  checkSignatureScope,
  chunkVerifier,
  parseClientSignature,
  signatureMatches,
} from './sigv4.js';

export interface S3Auth {
  caller: Caller;
  /** Set when the body is a signed aws-chunked stream: checks each frame's signature. */
  chunks?: { check: ChunkVerifier; seedSignature: string };
}

async function withChunks(caller: Caller, sig: ClientSignature, secret: string): Promise<S3Auth> {
  if (!sig.contentSha?.startsWith('STREAMING-AWS4-HMAC-SHA256-PAYLOAD')) return { caller };
  return { caller, chunks: { check: await chunkVerifier(sig, secret), seedSignature: sig.signature } };
}

export async function authenticateS3(
  req: FastifyRequest,
  platform: Platform,
  project: ProjectContext,
): Promise<S3Auth> {
  const sig = parseClientSignature(req);
  if (!sig) throw s3Errors.accessDenied('Missing signature');
  const { region, enforceRegion } = platform.config.s3Protocol;
  checkSignatureScope(sig, region, enforceRegion);

  if (sig.sessionToken !== undefined) {
    if (sig.accessKey !== project.ref) throw s3Errors.invalidAccessKeyId();
    let matched: string | undefined;
    for (const secret of [project.ref, project.anonKey]) {
      if (await signatureMatches(req, sig, secret)) {
        matched = secret;
        break;
      }
    }
    if (matched === undefined) throw s3Errors.signatureDoesNotMatch(true);
    try {
      const claims = await verifyJwt(project.jwtSecret, sig.sessionToken);
      const sub = typeof claims.sub === 'string' ? claims.sub : undefined;
      return withChunks({ role: claims.role, claims, sub }, sig, matched);
    } catch (err) {
      if (err instanceof JwtError) throw s3Errors.accessDenied(verifierText(err));
      throw err;
    }
  }

  const secret = await accessKeySecret(platform, project.ref, sig.accessKey);
  if (secret === undefined) throw s3Errors.invalidAccessKeyId();
  if (!(await signatureMatches(req, sig, secret))) throw s3Errors.signatureDoesNotMatch(false);
  return withChunks(SERVICE, sig, secret);
}
