/**
 * S3 object operations over the same pipeline as the REST API (same rows, same bytes, same RLS):
 * PutObject → uploadObject (upsert, as S3 overwrites), GetObject/HeadObject → the REST download
 * reply (ranges, conditionals), DeleteObject(s), CopyObject → copyObject.
 */
import type { Readable } from 'node:stream';
import { SERVICE, ownerUuid } from '../auth.js';
import { errors, StorageError } from '../errors.js';
import { assertBucketName, assertKey, isValidKey } from '../keys.js';
import { renderObject } from '../routes/render.js';
import { deleteObject, deleteObjects, findObject, requireObject } from '../service/objects.js';
import { copyObject } from '../service/transfers.js';
import { uploadObject } from '../service/uploads.js';
import { AwsChunkedDecoder, isAwsChunked } from './aws-chunked.js';
import { h, q, sendXml, userMetadataOf, type S3Request } from './context.js';
import { s3Errors } from './errors.js';
import { readXml, toXml } from './xml.js';
import { OPERATIONS } from '../operations.js';

const MAX_DELETE_KEYS = 1000;
const MAX_XML_BODY = 2 * 1024 * 1024;

export function contentTypeOf(r: S3Request): string {
  const v = h(r, 'content-type')?.trim();
  if (!v) return 'application/octet-stream';
  if (!/^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;.*)?$/.test(v)) throw errors.invalidContentType();
  return v;
}

/** The request body as plain bytes, and its declared length when known. */
export function bodyOf(r: S3Request): { stream: Readable; declaredLength?: number } {
  const chunked = isAwsChunked(h(r, 'x-amz-content-sha256'), h(r, 'content-encoding'));
  const lengthHeader = chunked ? h(r, 'x-amz-decoded-content-length') : h(r, 'content-length');
  const declaredLength = lengthHeader && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
  if (!chunked) return { stream: r.req.raw, declaredLength };
  const decoder = new AwsChunkedDecoder(r.chunks, h(r, 'x-amz-trailer'));
  // The body flows as soon as it is piped: a bad frame (or a missing trailer) in a small body can
  // fail the decoder before the write takes it. That must not be an unhandled 'error' (which ends
  // the process); the write then meets the destroyed stream and fails with the decoder's error.
  decoder.on('error', () => {});
  r.req.raw.on('error', (err) => decoder.destroy(err));
  return { stream: r.req.raw.pipe(decoder), declaredLength };
}

export async function putObject(r: S3Request): Promise<unknown> {
  assertKey(r.key);
  const abort = new AbortController();
  r.req.raw.on('close', () => {
    if (!r.req.raw.complete) abort.abort();
  });
  await uploadObject({
    project: r.project,
    backend: r.backend,
    globalLimit: r.globalLimit,
    writer: r.caller,
    owner: ownerUuid(r.caller),
    ownerId: r.caller.sub ?? null,
    bucket: r.bucket,
    key: r.key,
    upsert: true,
    operation: OPERATIONS.S3_UPLOAD,
    signal: abort.signal,
    body: async (limit) => {
      const { stream, declaredLength } = bodyOf(r);
      if (declaredLength !== undefined && declaredLength > limit) throw errors.entityTooLarge();
      return {
        stream,
        contentType: contentTypeOf(r),
        cacheControl: h(r, 'cache-control') ?? 'no-cache',
        userMetadata: userMetadataOf(r),
        declaredLength,
      };
    },
  });
  const row = await findObject(r.project, SERVICE, OPERATIONS.S3_UPLOAD, r.bucket, r.key);
  if (row?.metadata?.eTag) r.reply.header('etag', row.metadata.eTag);
  return r.reply.code(200).send();
}

/** GetObject's `response-*` query parameters and the headers they set (AWS GetObject). */
const RESPONSE_OVERRIDES: Record<string, string> = {
  'response-content-type': 'content-type',
  'response-content-language': 'content-language',
  'response-expires': 'expires',
  'response-cache-control': 'cache-control',
  'response-content-disposition': 'content-disposition',
  'response-content-encoding': 'content-encoding',
};

function responseOverrides(r: S3Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [param, header] of Object.entries(RESPONSE_OVERRIDES)) {
    const v = q(r, param);
    if (v === undefined) continue;
    if (!/^[\t\x20-\x7e]*$/.test(v)) throw s3Errors.invalidArgument(`Invalid value for ${param}`);
    const date = header === 'expires' ? Date.parse(v) : Number.NaN;
    out[header] = Number.isFinite(date) ? new Date(date).toUTCString() : v;
  }
  return out;
}

export async function getObject(r: S3Request): Promise<unknown> {
  assertKey(r.key);
  const read = () => requireObject(r.project, r.caller, OPERATIONS.S3_GET_OBJECT, r.bucket, r.key);
  const row = await read();
  for (const [name, v] of Object.entries(row.user_metadata ?? {})) {
    if (typeof v === 'string' && /^[\x20-\x7e]*$/.test(v) && /^[A-Za-z0-9_.-]+$/.test(name))
      r.reply.header(`x-amz-meta-${name}`, v);
  }
  return renderObject(r.req, r.reply, r.backend, row, { reload: read, overrides: responseOverrides(r) });
}

export async function deleteOne(r: S3Request): Promise<unknown> {
  assertKey(r.key);
  try {
    const row = await deleteObject(r.project, r.caller, r.bucket, r.key);
    if (row.version)
      await r.backend.delete([{ bucket: r.bucket, key: r.key, version: row.version }]).catch(() => {});
  } catch (err) {
    // S3 deletes are idempotent: a missing key is a success.
    if (!(err instanceof StorageError && err.code === 'NoSuchKey')) throw err;
  }
  return r.reply.code(204).send();
}

export async function deleteMany(r: S3Request): Promise<unknown> {
  const doc = await readXml(r.req.raw, MAX_XML_BODY);
  const del = doc.Delete as { Object?: Array<{ Key?: unknown }>; Quiet?: unknown } | undefined;
  if (!del || typeof del !== 'object') throw s3Errors.malformedXml();
  const objects = del.Object ?? [];
  if (objects.length === 0 || objects.length > MAX_DELETE_KEYS) throw s3Errors.malformedXml();
  const keys = objects.map((o) => (typeof o?.Key === 'string' ? o.Key : ''));
  const valid = keys.filter((k) => isValidKey(k));
  const rows = valid.length ? await deleteObjects(r.project, r.caller, r.bucket, valid) : [];
  const locs = rows.flatMap((x) =>
    x.version ? [{ bucket: x.bucket_id, key: x.name, version: x.version }] : [],
  );
  if (locs.length) await r.backend.delete(locs).catch(() => {});
  const quiet = del.Quiet === 'true' || del.Quiet === true;
  const deleted = keys.filter((k) => isValidKey(k)).map((Key) => ({ Key }));
  const failed = keys
    .filter((k) => !isValidKey(k))
    .map((Key) => ({ Key, Code: 'InvalidKey', Message: `Invalid key: ${Key}` }));
  return sendXml(
    r,
    200,
    toXml('DeleteResult', {
      ...(quiet || deleted.length === 0 ? {} : { Deleted: deleted }),
      ...(failed.length ? { Error: failed } : {}),
    }),
  );
}

/**
 * `x-amz-copy-source`: "[/]bucket/key[?versionId=…]", URL-encoded. Only a trailing `?versionId=`
 * is cut off (as the reference does): a raw `?` is a valid key character. The bucket name is checked
 * as a path's is, so that a source cannot name `..` or another invalid bucket.
 */
export function parseCopySource(v: string): { bucket: string; key: string } {
  const version = v.lastIndexOf('?versionId=');
  const path = (version < 0 ? v : v.slice(0, version)).replace(/^\//, '');
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    throw s3Errors.invalidArgument('Invalid copy source encoding');
  }
  const i = decoded.indexOf('/');
  if (i <= 0 || i === decoded.length - 1) throw s3Errors.invalidArgument('Invalid copy source object key');
  const bucket = decoded.slice(0, i);
  assertBucketName(bucket);
  return { bucket, key: decoded.slice(i + 1) };
}

export async function copyOne(r: S3Request, source: string): Promise<unknown> {
  assertKey(r.key);
  const src = parseCopySource(source);
  assertKey(src.key);
  const replace = h(r, 'x-amz-metadata-directive')?.toUpperCase() === 'REPLACE';
  // The copy meets the destination bucket's size and MIME rules (service/transfers.ts).
  const mimetype = replace ? contentTypeOf(r) : undefined;
  const row = await copyObject(
    {
      project: r.project,
      backend: r.backend,
      caller: r.caller,
      bucket: src.bucket,
      sourceKey: src.key,
      destinationBucket: r.bucket,
      destinationKey: r.key,
      globalLimit: r.globalLimit,
    },
    replace
      ? {
          upsert: true,
          copyMetadata: false,
          mimetype,
          cacheControl: h(r, 'cache-control') ?? 'no-cache',
          userMetadata: userMetadataOf(r),
        }
      : { upsert: true, copyMetadata: true },
  );
  return sendXml(
    r,
    200,
    toXml('CopyObjectResult', {
      LastModified: new Date(row.metadata?.lastModified ?? row.updated_at).toISOString(),
      ETag: row.metadata?.eTag ?? '',
    }),
  );
}
