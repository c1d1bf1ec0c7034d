/**
 * AWS Signature Version 4 for the S3 protocol, from the `Authorization` header or a presigned query.
 * The signature is recomputed with @smithy/signature-v4 (the AWS SDK's own signer) over the
 * request as received: method, raw path (S3 does not double-encode), query, exactly the headers the
 * client listed in SignedHeaders, and the payload hash it declared in `x-amz-content-sha256`
 * (UNSIGNED-PAYLOAD when absent, as the reference assumes for streamed bodies). Checked as the
 * reference checks: the credential scope's service is s3, the region (when enforced), the clock
 * (15 minutes for header auth, `X-Amz-Expires` for presigned URLs, at most 7 days).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { s3Errors } from './errors.js';

function bytes(d: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof d === 'string') return d;
  if (d instanceof ArrayBuffer) return new Uint8Array(d);
  return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
}

/** SHA-256 / HMAC-SHA256 in the shape smithy's signer takes. */
export class NodeSha256 {
  private readonly h: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.h = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.h.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
}

export interface ClientSignature {
  mode: 'header' | 'query';
  accessKey: string;
  shortDate: string;
  region: string;
  service: string;
  longDate: string;
  signedHeaders: string[];
  signature: string;
  sessionToken?: string;
  contentSha?: string;
  expires?: number;
}

const LONG_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const MAX_SKEW_MS = 15 * 60 * 1000;
const MAX_PRESIGNED_TTL = 7 * 24 * 3600;

function one(v: unknown): string | undefined {
  return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined;
}

function dateOf(longDate: string): Date {
  const m = LONG_DATE.exec(longDate);
  if (!m) throw s3Errors.invalidSignature('Invalid date');
  const [y, mo, d, hh, mm, ss] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  return new Date(Date.UTC(y, mo - 1, d, hh, mm, ss));
}

function credentialParts(
  credential: string,
): Pick<ClientSignature, 'accessKey' | 'shortDate' | 'region' | 'service'> {
  const parts = credential.split('/');
  if (parts.length !== 5 || parts[4] !== 'aws4_request')
    throw s3Errors.invalidSignature('Invalid credentials');
  const [accessKey, shortDate, region, service] = parts as [string, string, string, string];
  return { accessKey, shortDate, region, service };
}

/** The raw query string's pairs, decoded (repeated names keep every value). */
export function rawQuery(req: FastifyRequest): Record<string, string | string[]> {
  const url = req.raw.url ?? '';
  const i = url.indexOf('?');
  const out: Record<string, string | string[]> = Object.create(null);
  if (i < 0) return out;
  for (const [k, v] of new URLSearchParams(url.slice(i + 1))) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/** Reads the client's signature; undefined when the request carries none. */
export function parseClientSignature(req: FastifyRequest): ClientSignature | undefined {
  const auth = one(req.headers.authorization);
  if (auth) {
    // Any other scheme (AWS v2, another algorithm, a bearer token) is refused, not taken as unsigned.
    if (!/^AWS4-HMAC-SHA256(?:\s|$)/.test(auth))
      throw s3Errors.invalidSignature('Unsupported authorization type');
    const params = new Map<string, string>();
    for (const part of auth.slice('AWS4-HMAC-SHA256'.length).split(',')) {
      const i = part.indexOf('=');
      if (i > 0) params.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
    }
    const credential = params.get('Credential');
    const signedHeaders = params.get('SignedHeaders');
    const signature = params.get('Signature');
    const longDate = one(req.headers['x-amz-date']);
    if (!credential || !signedHeaders || !signature || !longDate)
      throw s3Errors.invalidSignature('Invalid signature format');
    return {
      mode: 'header',
      ...credentialParts(credential),
      longDate,
      signedHeaders: signedHeaders.split(';'),
      signature,
      sessionToken: one(req.headers['x-amz-security-token']),
      contentSha: one(req.headers['x-amz-content-sha256']),
    };
  }
  const q = rawQuery(req);
  const credential = one(q['X-Amz-Credential']);
  if (credential === undefined) return undefined;
  const signedHeaders = one(q['X-Amz-SignedHeaders']);
  const signature = one(q['X-Amz-Signature']);
  const longDate = one(q['X-Amz-Date']);
  const expires = one(q['X-Amz-Expires']);
  if (!signedHeaders || !signature || !longDate || one(q['X-Amz-Algorithm']) !== 'AWS4-HMAC-SHA256')
    throw s3Errors.invalidSignature('Invalid signature format');
  const exp = expires !== undefined && /^\d{1,7}$/.test(expires) ? Number(expires) : NaN;
  if (!Number.isInteger(exp) || exp < 1 || exp > MAX_PRESIGNED_TTL)
    throw s3Errors.invalidSignature('Invalid expiration');
  return {
    mode: 'query',
    ...credentialParts(credential),
    longDate,
    signedHeaders: signedHeaders.split(';'),
    signature,
    sessionToken: one(q['X-Amz-Security-Token']),
    contentSha: one(q['X-Amz-Content-Sha256']),
    expires: exp,
  };
}

/** Clock and scope checks that come before any secret is looked up. */
export function checkSignatureScope(sig: ClientSignature, region: string, enforceRegion: boolean): void {
  if (sig.service !== 's3') throw s3Errors.invalidSignature('Invalid credentials');
  if (enforceRegion && sig.region !== region) throw s3Errors.invalidRegion(sig.region);
  if (sig.longDate.slice(0, 8) !== sig.shortDate) throw s3Errors.invalidSignature('Invalid credentials');
  const signedAt = dateOf(sig.longDate).getTime();
  const now = Date.now();
  if (sig.mode === 'header') {
    if (Math.abs(now - signedAt) > MAX_SKEW_MS) throw s3Errors.skewed();
  } else {
    if (signedAt - now > MAX_SKEW_MS) throw s3Errors.skewed();
    if (now > signedAt + (sig.expires ?? 0) * 1000) throw s3Errors.expired();
  }
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** Recomputes the signature with `secret` (and the session token, if any) and compares. */
export async function signatureMatches(
  req: FastifyRequest,
  sig: ClientSignature,
  secret: string,
): Promise<boolean> {
  // The path the client signed: before rewriteProjectUrl stripped a `/project/<ref>` prefix.
  const url = req.originalUrl || req.raw.url || '/';
  const qi = url.indexOf('?');
  const path = qi < 0 ? url : url.slice(0, qi);
  const query = rawQuery(req);
  delete query['X-Amz-Signature'];
  const signed = new Set(sig.signedHeaders.map((h) => h.toLowerCase()));
  const headers: Record<string, string> = {};
  for (const name of signed) {
    const v = header(req, name);
    if (v !== undefined) headers[name] = v;
  }
  // What the signer would add itself must not enter the canonical headers unless the client signed it.
  const generated = ['x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256'];
  const unsignable = new Set(generated.filter((h) => !signed.has(h)));
  headers['x-amz-content-sha256'] = sig.contentSha ?? 'UNSIGNED-PAYLOAD';
  // The signer is imported by the first S3 request, not with the server.
  const { SignatureV4 } = await import('@smithy/signature-v4');
  const signer = new SignatureV4({
    credentials: { accessKeyId: sig.accessKey, secretAccessKey: secret, sessionToken: sig.sessionToken },
    region: sig.region,
    service: 's3',
    sha256: NodeSha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
  const request = {
    method: req.method,
    protocol: 'http:',
    hostname: header(req, 'host') ?? '',
    path,
    query: { ...query },
    headers,
  };
  const signingDate = dateOf(sig.longDate);
  let computed: string | undefined;
  if (sig.mode === 'header') {
    const out = await signer.sign(request, {
      signingDate,
      signableHeaders: signed,
      unsignableHeaders: unsignable,
      signingRegion: sig.region,
      signingService: 's3',
    });
    computed = /Signature=([0-9a-f]+)/.exec(String(out.headers.authorization ?? ''))?.[1];
  } else {
    for (const k of [
      'X-Amz-Algorithm',
      'X-Amz-Credential',
      'X-Amz-Date',
      'X-Amz-Expires',
      'X-Amz-SignedHeaders',
      'X-Amz-Security-Token',
    ])
      delete request.query[k];
    const out = await signer.presign(request, {
      signingDate,
      expiresIn: sig.expires,
      signableHeaders: signed,
      unsignableHeaders: new Set([...unsignable, 'x-amz-content-sha256']),
      unhoistableHeaders: new Set(Object.keys(headers)),
      signingRegion: sig.region,
      signingService: 's3',
    });
    computed = one(out.query?.['X-Amz-Signature']);
  }
  if (!computed || computed.length !== sig.signature.length) return false;
  return timingSafeEqual(Buffer.from(computed), Buffer.from(sig.signature));
}

/** Checks one frame of a signed aws-chunked body (its signature chains from the previous one). */
export type ChunkVerifier = (previousSignature: string, dataSha256Hex: string, signature: string) => boolean;

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** The verifier of STREAMING-AWS4-HMAC-SHA256-PAYLOAD frames for a request signed with `secret`. */
export async function chunkVerifier(sig: ClientSignature, secret: string): Promise<ChunkVerifier> {
  const { getSigningKey } = await import('@smithy/signature-v4');
  const key = await getSigningKey(
    NodeSha256,
    { accessKeyId: sig.accessKey, secretAccessKey: secret, sessionToken: sig.sessionToken },
    sig.shortDate,
    sig.region,
    's3',
  );
  const scope = `${sig.shortDate}/${sig.region}/s3/aws4_request`;
  return (previous, dataHash, signature) => {
    const stringToSign = [
      'AWS4-HMAC-SHA256-PAYLOAD',
      sig.longDate,
      scope,
      previous,
      EMPTY_SHA256,
      dataHash,
    ].join('\n');
    const expected = createHmac('sha256', key).update(stringToSign).digest('hex');
    return (
      expected.length === signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature))
    );
  };
}
