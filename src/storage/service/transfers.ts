/**
 * Move (S16) and copy (S19): read the source as the caller, copy its bytes to a fresh version at
 * the destination, then commit the row; the new bytes are removed if the commit fails, the old
 * ones (move, or a replaced destination) after it succeeds.
 */
import { randomUUID } from 'node:crypto';
import type { ProjectContext } from '../../platform/project-context.js';
import type { StorageBackend } from '../backend/interface.js';
import { SERVICE, ownerUuid, type Caller } from '../auth.js';
import { StorageError, errors } from '../errors.js';
import { assertKey, isFolderPlaceholder } from '../keys.js';
import { checkMimeType, effectiveLimit } from '../limits.js';
import { bucketLimits } from './buckets.js';
import { commitMove, commitNewBytes } from './object-writes.js';
import type { ObjectRow, SystemMetadata } from '../database/index.js';
import { findObject, requireObject } from './objects.js';
import { OPERATIONS } from '../operations.js';

export interface Transfer {
  project: ProjectContext;
  backend: StorageBackend;
  caller: Caller;
  bucket: string;
  sourceKey: string;
  destinationBucket: string;
  destinationKey: string;
  /** The platform's upload limit (STRATA_STORAGE_FILE_SIZE_LIMIT). */
  globalLimit: number;
}

/**
 * A copy or move is a write into the destination bucket: its file_size_limit and
 * allowed_mime_types hold as they do for an upload (413 / 415).
 */
async function checkDestinationLimits(t: Transfer, meta: SystemMetadata): Promise<number> {
  // A destination bucket that does not exist stays the commit's "related resource" error.
  const bucket = await bucketLimits(t.project, t.destinationBucket).catch((err: unknown) => {
    throw err instanceof StorageError && err.code === 'NoSuchBucket' ? errors.relatedMissing() : err;
  });
  const size = Number(meta.size ?? meta.contentLength ?? 0);
  const limit = effectiveLimit(t.globalLimit, bucket.fileSizeLimit, false);
  if (size > limit) throw errors.entityTooLarge();
  // A folder marker is not content: no MIME rule, as for its upload.
  if (!isFolderPlaceholder(t.destinationKey))
    checkMimeType(bucket.allowedMimeTypes, meta.mimetype ?? 'application/octet-stream');
  return limit;
}

async function copyBytes(
  t: Transfer,
  src: ObjectRow,
  meta: SystemMetadata,
): Promise<{ version: string; sourceVersion: string; metadata: SystemMetadata }> {
  if (!src.version) throw errors.missingBytes();
  const limit = await checkDestinationLimits(t, meta);
  const version = randomUUID();
  let stored: Awaited<ReturnType<typeof t.backend.copy>>;
  try {
    stored = await t.backend.copy(
      { bucket: src.bucket_id, key: src.name, version: src.version },
      { bucket: t.destinationBucket, key: t.destinationKey, version },
      { contentType: meta.mimetype, cacheControl: meta.cacheControl },
    );
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT' || (err as { name?: string }).name === 'NoSuchKey')
      throw errors.missingBytes();
    throw err;
  }
  // The recorded size was checked; the bytes actually copied are too (a row whose size is missing).
  if (stored.size > limit) {
    await t.backend.delete([{ bucket: t.destinationBucket, key: t.destinationKey, version }]).catch(() => {});
    throw errors.entityTooLarge();
  }
  return {
    version,
    sourceVersion: src.version,
    metadata: {
      ...meta,
      eTag: stored.eTag,
      size: stored.size,
      contentLength: stored.size,
      lastModified: stored.lastModified.toISOString(),
    },
  };
}

export async function moveObject(t: Transfer): Promise<void> {
  assertKey(t.destinationKey);
  const src = await requireObject(t.project, t.caller, OPERATIONS.MOVE_OBJECT, t.bucket, t.sourceKey);
  if (t.bucket === t.destinationBucket && t.sourceKey === t.destinationKey) return;
  const { version, sourceVersion, metadata } = await copyBytes(
    t,
    src,
    src.metadata ?? ({} as SystemMetadata),
  );
  const dst = { bucket: t.destinationBucket, key: t.destinationKey, version };
  try {
    await commitMove(
      t.project,
      t.caller,
      { bucket: t.bucket, key: t.sourceKey, version: src.version },
      {
        ...dst,
        owner: ownerUuid(t.caller),
        ownerId: t.caller.sub ?? null,
        metadata,
        userMetadata: src.user_metadata,
      },
    );
  } catch (err) {
    await t.backend.delete([dst]).catch(() => {});
    throw err;
  }
  await t.backend.delete([{ bucket: src.bucket_id, key: src.name, version: sourceVersion }]).catch(() => {});
}

export interface CopyOptions {
  upsert: boolean;
  copyMetadata: boolean;
  /** Used when copyMetadata is false. */
  cacheControl?: string;
  mimetype?: string;
  userMetadata?: Record<string, unknown>;
}

export async function copyObject(t: Transfer, o: CopyOptions): Promise<ObjectRow> {
  const src = await requireObject(t.project, t.caller, OPERATIONS.COPY_OBJECT, t.bucket, t.sourceKey);
  assertKey(t.destinationKey);
  let meta = src.metadata ?? ({} as SystemMetadata);
  let userMetadata = src.user_metadata;
  if (!o.copyMetadata) {
    meta = {
      ...meta,
      ...(o.cacheControl !== undefined ? { cacheControl: o.cacheControl } : {}),
      ...(o.mimetype !== undefined ? { mimetype: o.mimetype } : {}),
    };
    userMetadata = o.userMetadata ?? null;
  }
  const { version, metadata } = await copyBytes(t, src, meta);
  const dst = { bucket: t.destinationBucket, key: t.destinationKey, version };
  await commitNewBytes(
    t.backend,
    t.project,
    t.caller,
    OPERATIONS.COPY_OBJECT,
    { ...dst, owner: ownerUuid(t.caller), ownerId: t.caller.sub ?? null, metadata, userMetadata },
    o.upsert,
  );
  // The reply shows the row just written; read back bypassing RLS, since writing it needed only INSERT.
  const row = await findObject(
    t.project,
    SERVICE,
    OPERATIONS.COPY_OBJECT,
    t.destinationBucket,
    t.destinationKey,
  );
  if (!row) throw errors.noSuchKey();
  return row;
}
