/**
 * Browser-based uploads with a POST policy (AWS "Authenticating Requests in Browser-Based Uploads
 * Using POST", SigV4): `POST /s3/{bucket}` with a multipart/form-data body whose fields carry the
 * key, a base64 JSON policy, `x-amz-algorithm`, `x-amz-credential`, `x-amz-date`, `x-amz-signature`
 * (HMAC-SHA256 of the base64 policy with the SigV4 signing key) and the file last.
 *
 * Checked as AWS checks: the signature; the policy's expiration; every condition (exact match,
 * `starts-with`, `content-length-range`) against the form fields and the bucket; and every form
 * field (but `policy`, `x-amz-signature`, `file` and `x-ignore-*`) named by a condition. Access
 * keys act as the service role; session credentials (access key = project ref, secret = the ref or
 * the anon key, `x-amz-security-token` = a JWT) as the token's role, so RLS applies. The object is
 * then written by the same upload pipeline as PutObject (bucket limits, MIME rules, RLS).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { JwtError, verifyJwt } from '../../auth/jwt.js';
import type { Platform } from '../../platform/platform.js';
import type { ProjectContext } from '../../platform/project-context.js';
import { ownerUuid, SERVICE, verifierText } from '../auth.js';
import { errors } from '../errors.js';
import { assertKey } from '../keys.js';
import { findObject } from '../service/objects.js';
import { uploadObject } from '../service/uploads.js';
import type { S3Auth } from './auth.js';
import type { S3Request } from './context.js';
import { accessKeySecret } from './credentials.js';
import { s3Errors } from './errors.js';
import { toXml } from './xml.js';
import { OPERATIONS } from '../operations.js';

/** A POST policy request: a form POST to a bucket, without an Authorization header or presigned query. */
export function isPostPolicyRequest(req: FastifyRequest): boolean {
  const type = req.headers['content-type'];
  const params = req.params as { '*'?: string };
  return (
    req.method === 'POST' &&
    !params['*'] &&
    typeof type === 'string' &&
    /^multipart\/form-data\b/i.test(type) &&
    req.headers.authorization === undefined &&
    !/[?&]X-Amz-Credential=/i.test(req.raw.url ?? '')
  );
}

export interface PostForm {
  /** Form fields before the file, names lower-cased. */
  fields: Map<string, string>;
  file: MultipartFile;
}

const forms = new WeakMap<FastifyRequest, PostForm>();

const MAX_FIELDS = 64;
const MAX_FIELD_BYTES = 64 * 1024;

async function readForm(req: FastifyRequest): Promise<PostForm> {
  let file: MultipartFile | undefined;
  try {
    file = await req.file({ limits: { files: 1, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES } });
  } catch {
    throw s3Errors.malformedPost('The body of your POST request is not well-formed multipart/form-data.');
  }
  if (!file) throw s3Errors.malformedPost('POST requires exactly one file upload per request.');
  const fields = new Map<string, string>();
  for (const [name, entry] of Object.entries(file.fields)) {
    const one = Array.isArray(entry) ? entry[0] : entry;
    if (one && one.type === 'field' && typeof one.value === 'string')
      fields.set(name.toLowerCase(), one.value);
  }
  return { fields, file };
}

function signingKey(secret: string, date: string, region: string): Buffer {
  const kDate = createHmac('sha256', `AWS4${secret}`).update(date).digest();
  const kRegion = createHmac('sha256', kDate).update(region).digest();
  const kService = createHmac('sha256', kRegion).update('s3').digest();
  return createHmac('sha256', kService).update('aws4_request').digest();
}

function signatureOk(
  secret: string,
  date: string,
  region: string,
  policy: string,
  signature: string,
): boolean {
  const want = createHmac('sha256', signingKey(secret, date, region))
    .update(policy)
    .digest();
  const got = /^[0-9a-f]{64}$/.test(signature) ? Buffer.from(signature, 'hex') : Buffer.alloc(0);
  return got.length === want.length && timingSafeEqual(got, want);
}

/** Reads the form and establishes the caller from its signed policy (runs where the header auth would). */
export async function authenticatePostPolicy(
  req: FastifyRequest,
  platform: Platform,
  project: ProjectContext,
): Promise<S3Auth> {
  const form = await readForm(req);
  forms.set(req, form);
  const f = form.fields;
  const policy = f.get('policy');
  const signature = f.get('x-amz-signature');
  const credential = f.get('x-amz-credential');
  if (!policy || !signature || !credential) throw s3Errors.accessDenied('Missing POST policy signature');
  if (f.get('x-amz-algorithm') !== 'AWS4-HMAC-SHA256')
    throw s3Errors.invalidArgument('Only the AWS4-HMAC-SHA256 algorithm is supported');
  const parts = credential.split('/');
  if (parts.length !== 5 || parts[3] !== 's3' || parts[4] !== 'aws4_request')
    throw s3Errors.invalidArgument('Invalid x-amz-credential');
  const [accessKey, date, region] = parts as [string, string, string];
  const { region: ours, enforceRegion } = platform.config.s3Protocol;
  if (enforceRegion && region !== ours) throw s3Errors.invalidRegion(region);

  const sessionToken = f.get('x-amz-security-token');
  if (sessionToken !== undefined) {
    if (accessKey !== project.ref) throw s3Errors.invalidAccessKeyId();
    if (![project.ref, project.anonKey].some((s) => signatureOk(s, date, region, policy, signature)))
      throw s3Errors.signatureDoesNotMatch(true);
    try {
      const claims = await verifyJwt(project.jwtSecret, sessionToken);
      const sub = typeof claims.sub === 'string' ? claims.sub : undefined;
      return { caller: { role: claims.role, claims, sub } };
    } catch (err) {
      if (err instanceof JwtError) throw s3Errors.accessDenied(verifierText(err));
      throw err;
    }
  }
  const secret = await accessKeySecret(platform, project.ref, accessKey);
  if (secret === undefined) throw s3Errors.invalidAccessKeyId();
  if (!signatureOk(secret, date, region, policy, signature)) throw s3Errors.signatureDoesNotMatch(false);
  return { caller: SERVICE };
}

interface Policy {
  expiration: number;
  conditions: unknown[];
}

function parsePolicy(b64: string): Policy {
  let doc: { expiration?: unknown; conditions?: unknown };
  try {
    doc = JSON.parse(Buffer.from(b64, 'base64').toString('utf8')) as typeof doc;
  } catch {
    throw s3Errors.malformedPost('Invalid Policy: Invalid JSON.');
  }
  const expiration = typeof doc?.expiration === 'string' ? Date.parse(doc.expiration) : Number.NaN;
  if (!Number.isFinite(expiration)) throw s3Errors.malformedPost('Invalid Policy: Invalid expiration.');
  if (!Array.isArray(doc.conditions)) throw s3Errors.malformedPost('Invalid Policy: Invalid conditions.');
  return { expiration, conditions: doc.conditions };
}

/** AWS's placeholder in a POST key: the literal characters `$`, `{filename}`. */
const FILENAME_VARIABLE = ['$', '{filename}'].join('');

const EXEMPT = new Set(['policy', 'x-amz-signature', 'file']);

/** The policy's conditions against the form; returns the content-length-range, if any. */
function checkConditions(
  policy: Policy,
  values: Map<string, string>,
): { min: number; max: number } | undefined {
  if (Date.now() > policy.expiration)
    throw s3Errors.accessDenied('Invalid according to Policy: Policy expired.');
  const covered = new Set<string>();
  let range: { min: number; max: number } | undefined;
  const fail = (what: string) =>
    s3Errors.accessDenied(`Invalid according to Policy: Policy Condition failed: ${what}`);
  const fieldOf = (ref: unknown) => (typeof ref === 'string' ? ref.replace(/^\$/, '').toLowerCase() : '');
  for (const c of policy.conditions) {
    if (Array.isArray(c)) {
      const [op, a, b] = c as [unknown, unknown, unknown];
      const kind = typeof op === 'string' ? op.toLowerCase() : '';
      if (kind === 'content-length-range') {
        const min = Number(a);
        const max = Number(b);
        if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 0 || max < min)
          throw s3Errors.malformedPost('Invalid Policy: Invalid content-length-range.');
        range = { min, max };
        continue;
      }
      const name = fieldOf(a);
      if ((kind !== 'eq' && kind !== 'starts-with') || !name || typeof b !== 'string')
        throw s3Errors.malformedPost('Invalid Policy: Invalid condition.');
      covered.add(name);
      const v = values.get(name) ?? '';
      if (kind === 'eq' ? v !== b : !v.startsWith(b)) throw fail(JSON.stringify(c));
    } else if (c && typeof c === 'object') {
      for (const [k, want] of Object.entries(c)) {
        const name = k.toLowerCase();
        covered.add(name);
        if (typeof want !== 'string' || (values.get(name) ?? '') !== want)
          throw fail(JSON.stringify({ [k]: want }));
      }
    } else throw s3Errors.malformedPost('Invalid Policy: Invalid condition.');
  }
  for (const name of values.keys()) {
    if (name === 'bucket' || EXEMPT.has(name) || name.startsWith('x-ignore-')) continue;
    if (!covered.has(name))
      throw s3Errors.accessDenied(`Invalid according to Policy: Extra input fields: ${name}`);
  }
  return range;
}

/**
 * The file's bytes, checked against the policy's content-length-range as they pass (read lazily:
 * nothing flows before the upload pipeline reads it).
 */
async function* withinRange(source: Readable, range: { min: number; max: number }): AsyncGenerator<Buffer> {
  let n = 0;
  for await (const chunk of source) {
    n += (chunk as Buffer).length;
    if (n > range.max) throw errors.entityTooLarge();
    yield chunk as Buffer;
  }
  if (n < range.min) throw s3Errors.entityTooSmall();
}

export async function postObject(r: S3Request): Promise<unknown> {
  const form = forms.get(r.req);
  if (!form) throw s3Errors.accessDenied('Missing POST policy signature');
  const values = new Map(form.fields);
  values.set('bucket', r.bucket);
  const filename = form.file.filename ?? '';
  const keyField = values.get('key');
  if (!keyField) throw s3Errors.invalidArgument('Bucket POST must contain a field named key.');
  // The literal `${filename}` in the key is the uploaded file's name (AWS).
  const key = keyField.replaceAll(FILENAME_VARIABLE, filename);
  assertKey(key);
  const range = checkConditions(parsePolicy(values.get('policy') ?? ''), values);

  const userMetadata: Record<string, string> = {};
  for (const [name, v] of values) if (name.startsWith('x-amz-meta-')) userMetadata[name.slice(11)] = v;
  const contentType = values.get('content-type') ?? (form.file.mimetype || 'application/octet-stream');
  await uploadObject({
    project: r.project,
    backend: r.backend,
    globalLimit: r.globalLimit,
    writer: r.caller,
    owner: ownerUuid(r.caller),
    ownerId: r.caller.sub ?? null,
    bucket: r.bucket,
    key,
    upsert: true,
    operation: OPERATIONS.S3_POST_OBJECT,
    body: async () => ({
      stream: range ? Readable.from(withinRange(form.file.file, range)) : form.file.file,
      contentType,
      cacheControl: values.get('cache-control') ?? 'no-cache',
      userMetadata,
    }),
  });
  const row = await findObject(r.project, SERVICE, OPERATIONS.S3_POST_OBJECT, r.bucket, key);
  const eTag = row?.metadata?.eTag ?? '';
  if (eTag) r.reply.header('etag', eTag);
  r.reply.header('location', `/${r.bucket}/${key}`);
  const status = values.get('success_action_status');
  if (status === '201')
    return r.reply
      .code(201)
      .type('application/xml')
      .send(
        toXml('PostResponse', { Location: `/${r.bucket}/${key}`, Bucket: r.bucket, Key: key, ETag: eTag }),
      );
  // 200 as the reference answers by default (AWS's default is 204); 204 when asked for.
  return r.reply.code(status === '204' ? 204 : 200).send();
}
