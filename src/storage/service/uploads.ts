/**
 * The upload pipeline (§1.9), ordered so that either side failing leaves nothing half-done:
 * bucket limits → key → RLS dry run → bytes to a fresh version → row commit (bytes removed if it
 * fails) → previous version's bytes removed.
 */
import { randomUUID } from 'node:crypto';
import type { ProjectContext } from '../../platform/project-context.js';
import type { ObjectLocation, PutOptions, StorageBackend, StoredObject } from '../backend/interface.js';
import { isServiceRole, type Caller } from '../auth.js';
import { errors } from '../errors.js';
import { assertKey, isFolderPlaceholder } from '../keys.js';
import { checkMimeType, effectiveLimit } from '../limits.js';
import type { ObjectWrite, SystemMetadata } from '../database/index.js';
import type { Operation } from '../operations.js';
import { bucketLimits } from './buckets.js';
import { commitNewBytes, dryRunWrite } from './object-writes.js';
import type { Readable } from 'node:stream';

/** What an upload says about its content. */
export interface UploadDescription {
  contentType: string;
  cacheControl: string;
  userMetadata: Record<string, unknown>;
  /** Content-Length of a raw body, when declared. */
  declaredLength?: number;
  xRobotsTag?: string;
}

/** The content of an upload request, as read by routes/upload-body.ts. */
export interface UploadBody extends UploadDescription {
  stream: Readable;
}

/**
 * Bytes already stored for the upload (a completed resumable upload), taken as the new version
 * instead of a body stream: `take` measures them (MD5 ETag, size, limit) and publishes them.
 */
export interface StoredBytes {
  version: string;
  take(loc: ObjectLocation, limits: Pick<PutOptions, 'maxBytes' | 'limitError'>): Promise<StoredObject>;
}

export interface UploadRequest {
  project: ProjectContext;
  backend: StorageBackend;
  globalLimit: number;
  /** Who the row is written as (the caller, or the service role for signed uploads). */
  writer: Caller;
  /** owner / owner_id of the row. */
  owner: string | null;
  ownerId: string | null;
  bucket: string;
  key: string;
  upsert: boolean;
  operation: Operation;
  /** Reads the request body once limits are known (with `stored`: only its description). */
  body: (limit: number) => Promise<UploadBody | UploadDescription>;
  stored?: StoredBytes;
  signal?: AbortSignal;
}

export async function uploadObject(u: UploadRequest): Promise<{ Id: string; Key: string }> {
  assertKey(u.key);
  const bucket = await bucketLimits(u.project, u.bucket, u.key);
  const placeholder = isFolderPlaceholder(u.key);
  const limit = effectiveLimit(u.globalLimit, bucket.fileSizeLimit, placeholder);
  const body = await u.body(limit);
  if (!placeholder) checkMimeType(bucket.allowedMimeTypes, body.contentType);

  const candidate: ObjectWrite = {
    bucket: u.bucket,
    key: u.key,
    owner: u.owner,
    ownerId: u.ownerId,
    metadata: { mimetype: body.contentType, contentLength: body.declaredLength ?? 0 },
    userMetadata: body.userMetadata,
    version: null,
  };
  // RLS dry run before any byte is stored; the service role bypasses RLS, so for it the existence
  // check made with the bucket read is all the dry run could tell.
  if (!isServiceRole(u.writer)) await dryRunWrite(u.project, u.writer, u.operation, candidate, u.upsert);
  else if (bucket.keyExists && !u.upsert) throw errors.keyAlreadyExists();

  const version = u.stored?.version ?? randomUUID();
  const loc = { bucket: u.bucket, key: u.key, version };
  let stored: StoredObject;
  if (u.stored) stored = await u.stored.take(loc, { maxBytes: limit, limitError: errors.entityTooLarge });
  else if ('stream' in body)
    stored = await u.backend.put(loc, body.stream, {
      contentType: body.contentType,
      cacheControl: body.cacheControl,
      maxBytes: limit,
      limitError: errors.entityTooLarge,
      signal: u.signal,
    });
  else throw errors.internal();
  const metadata: SystemMetadata = {
    eTag: stored.eTag,
    size: stored.size,
    mimetype: body.contentType,
    cacheControl: body.cacheControl,
    lastModified: stored.lastModified.toISOString(),
    contentLength: stored.size,
    httpStatusCode: 200,
    ...(body.xRobotsTag ? { xRobotsTag: body.xRobotsTag } : {}),
  };
  const id = await commitNewBytes(
    u.backend,
    u.project,
    u.writer,
    u.operation,
    { ...candidate, metadata, version },
    u.upsert,
  );
  return { Id: id, Key: `${u.bucket}/${u.key}` };
}
