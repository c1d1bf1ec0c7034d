/**
 * S3 multipart uploads. Creating one checks the bucket, the MIME type and (RLS dry run) that the
 * caller may write the key; each part is stored as its own backend version and recorded in
 * storage.s3_multipart_uploads_parts; completing one claims the upload, concatenates the parts into
 * the object's new version, commits the row as the caller (the same commit as a REST upload), then
 * removes the parts. Only the upload's creator (or the service role) may touch an upload.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { StoredObject } from '../backend/interface.js';
import type { ByteSpan } from '../byte-range.js';
import { isServiceRole, ownerUuid, SERVICE } from '../auth.js';
import { errors } from '../errors.js';
import { assertKey } from '../keys.js';
import { checkMimeType, effectiveLimit } from '../limits.js';
import {
  claimUpload,
  deleteUpload,
  deleteUploadReturningParts,
  inTx,
  insertUpload,
  lockClaimableUpload,
  lockOpenUpload,
  type PartRow,
  releaseUpload,
  selectPartVersion,
  selectParts,
  selectPartsPage,
  selectPartVersions,
  selectUpload,
  setInProgressSize,
  sumPartSizes,
  type SystemMetadata,
  type UploadRow,
  upsertPart,
} from '../database/index.js';
import { OPERATIONS, type Operation } from '../operations.js';
import { bucketLimits } from '../service/buckets.js';
import { commitWrite, dryRunWrite } from '../service/object-writes.js';
import { findObject, requireObject } from '../service/objects.js';
import { h, q, sendXml, userMetadataOf, type S3Request } from './context.js';
import { s3Errors } from './errors.js';
import { bodyOf, contentTypeOf, parseCopySource } from './objects.js';
import { readXml, toXml } from './xml.js';

const MAX_PARTS = 10_000;
/** AWS: every part but the last is at least 5 MiB, checked when the upload is completed. */
export const MIN_PART_SIZE = 5 * 1024 * 1024;

const MAX_XML_BODY = 4 * 1024 * 1024;

const admin = <T>(r: S3Request, op: Operation, work: Parameters<typeof inTx<T>>[3]) =>
  inTx<T>(r.project, SERVICE, op, work);

async function loadUpload(r: S3Request, uploadId: string, op: Operation): Promise<UploadRow> {
  const row = await admin(r, op, (db) => selectUpload(db, uploadId, r.bucket, r.key));
  if (!row) throw s3Errors.noSuchUpload();
  if (!isServiceRole(r.caller) && row.owner_id !== (r.caller.sub ?? null)) throw s3Errors.noSuchUpload();
  return row;
}

export async function createMultipartUpload(r: S3Request): Promise<unknown> {
  assertKey(r.key);
  const bucket = await bucketLimits(r.project, r.bucket, r.key);
  const contentType = contentTypeOf(r);
  checkMimeType(bucket.allowedMimeTypes, contentType);
  const userMetadata = userMetadataOf(r);
  if (!isServiceRole(r.caller)) {
    await dryRunWrite(
      r.project,
      r.caller,
      OPERATIONS.S3_CREATE_MULTIPART,
      {
        bucket: r.bucket,
        key: r.key,
        owner: ownerUuid(r.caller),
        ownerId: r.caller.sub ?? null,
        metadata: { mimetype: contentType },
        userMetadata,
        version: null,
      },
      true,
    );
  }
  const id = randomUUID();
  await admin(r, OPERATIONS.S3_CREATE_MULTIPART, (db) =>
    insertUpload(db, {
      id,
      bucket: r.bucket,
      key: r.key,
      version: randomUUID(),
      ownerId: r.caller.sub ?? null,
      contentType,
      cacheControl: h(r, 'cache-control') ?? 'no-cache',
      userMetadata,
    }),
  );
  return sendXml(
    r,
    200,
    toXml('InitiateMultipartUploadResult', { Bucket: r.bucket, Key: r.key, UploadId: id }),
  );
}

function partNumberOf(v: string | undefined): number {
  const n = v !== undefined && /^\d{1,5}$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_PARTS)
    throw s3Errors.invalidArgument('Part number must be an integer between 1 and 10000, inclusive');
  return n;
}

export async function uploadPart(r: S3Request, uploadId: string): Promise<unknown> {
  assertKey(r.key);
  const partNumber = partNumberOf(q(r, 'partNumber'));
  const upload = await loadUpload(r, uploadId, OPERATIONS.S3_UPLOAD_PART);
  const stored = await storePart(r, upload, partNumber, (limit) => {
    const { stream, declaredLength } = bodyOf(r);
    if (declaredLength !== undefined && declaredLength > limit) throw errors.entityTooLarge();
    return stream;
  });
  r.reply.header('etag', stored.eTag);
  return r.reply.code(200).send();
}

/**
 * UploadPartCopy: a part's bytes from an existing object (all of it, or `x-amz-copy-source-range:
 * bytes=first-last`, the only form AWS accepts there), read as the caller (RLS SELECT on the
 * source), so that objects over the single-copy size can be copied in parts.
 */
export async function uploadPartCopy(r: S3Request, uploadId: string, source: string): Promise<unknown> {
  assertKey(r.key);
  const partNumber = partNumberOf(q(r, 'partNumber'));
  const upload = await loadUpload(r, uploadId, OPERATIONS.S3_UPLOAD_PART_COPY);
  const src = parseCopySource(source);
  assertKey(src.key);
  const row = await requireObject(r.project, r.caller, OPERATIONS.S3_UPLOAD_PART_COPY, src.bucket, src.key);
  if (!row.version) throw errors.missingBytes();
  const size = Number(row.metadata?.size ?? row.metadata?.contentLength ?? 0);
  const range = copySourceRange(h(r, 'x-amz-copy-source-range'), size);
  const stream = await r.backend.get({ bucket: row.bucket_id, key: row.name, version: row.version }, range);
  if (!stream) throw errors.missingBytes();
  const length = range ? range.end - range.start + 1 : size;
  let stored: StoredObject;
  try {
    stored = await storePart(r, upload, partNumber, (limit) => {
      if (length > limit) throw errors.entityTooLarge();
      return stream;
    });
  } finally {
    stream.destroy();
  }
  return sendXml(
    r,
    200,
    toXml('CopyPartResult', { LastModified: stored.lastModified.toISOString(), ETag: stored.eTag }),
  );
}

function copySourceRange(header: string | undefined, size: number): ByteSpan | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=(\d+)-(\d+)$/.exec(header.trim());
  const start = m ? Number(m[1]) : Number.NaN;
  const end = m ? Number(m[2]) : Number.NaN;
  if (!m || start > end)
    throw s3Errors.invalidArgument(
      'The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy',
    );
  if (end >= size)
    throw s3Errors.invalidArgument('Range specified is not valid for source object of size: ' + size);
  return { start, end };
}

/** Stores one part's bytes and records them; the part it replaces (same number) is removed. */
async function storePart(
  r: S3Request,
  upload: UploadRow,
  partNumber: number,
  body: (limit: number) => Readable,
): Promise<StoredObject> {
  const bucket = await bucketLimits(r.project, r.bucket);
  const limit = effectiveLimit(r.globalLimit, bucket.fileSizeLimit, false);
  const stream = body(limit);
  const abort = new AbortController();
  r.req.raw.on('close', () => {
    if (!r.req.raw.complete) abort.abort();
  });
  const loc = { bucket: r.bucket, key: r.key, version: randomUUID() };
  const stored = await r.backend.put(loc, stream, {
    contentType: 'application/octet-stream',
    cacheControl: 'no-cache',
    maxBytes: limit,
    limitError: errors.entityTooLarge,
    signal: abort.signal,
  });
  let replaced: string | undefined;
  try {
    replaced = await admin(r, OPERATIONS.S3_UPLOAD_PART, async (db) => {
      // The upload row locked: a complete or abort cannot run between our check and insert.
      if (!(await lockOpenUpload(db, upload.id))) throw s3Errors.noSuchUpload();
      const prev = await selectPartVersion(db, upload.id, partNumber);
      await upsertPart(db, {
        uploadId: upload.id,
        partNumber,
        size: stored.size,
        bucket: r.bucket,
        key: r.key,
        etag: stored.eTag,
        ownerId: r.caller.sub ?? null,
        version: loc.version,
      });
      const size = await sumPartSizes(db, upload.id);
      if (size > limit) throw errors.entityTooLarge();
      await setInProgressSize(db, upload.id, size);
      return prev;
    });
  } catch (err) {
    await r.backend.delete([loc]).catch(() => {});
    throw err;
  }
  if (replaced) await r.backend.delete([{ ...loc, version: replaced }]).catch(() => {});
  return stored;
}

function unquote(s: string): string {
  return s.trim().replace(/^"|"$/g, '');
}

export async function completeMultipartUpload(r: S3Request, uploadId: string): Promise<unknown> {
  assertKey(r.key);
  const doc = await readXml(r.req.raw, MAX_XML_BODY);
  const requested = (
    doc.CompleteMultipartUpload as { Part?: Array<{ PartNumber?: unknown; ETag?: unknown }> }
  )?.Part;
  if (!Array.isArray(requested) || requested.length === 0) throw s3Errors.malformedXml();
  const wanted = requested.map((p) => ({
    n: partNumberOf(typeof p.PartNumber === 'string' ? p.PartNumber.trim() : undefined),
    etag: typeof p.ETag === 'string' ? unquote(p.ETag) : '',
  }));
  if (wanted.some((w, i) => i > 0 && w.n <= (wanted[i - 1]?.n ?? 0))) throw s3Errors.invalidPartOrder();

  const upload = await loadUpload(r, uploadId, OPERATIONS.S3_COMPLETE_MULTIPART);
  // Claim the upload, so that a second complete (or a late part) cannot interleave with this one.
  const claimed = await admin(r, OPERATIONS.S3_COMPLETE_MULTIPART, async (db) =>
    (await claimUpload(db, upload.id)) ? selectParts(db, upload.id) : undefined,
  );
  if (!claimed) throw s3Errors.noSuchUpload();
  const release = () =>
    admin(r, OPERATIONS.S3_COMPLETE_MULTIPART, (db) => releaseUpload(db, upload.id)).catch(() => {});

  const finalLoc = { bucket: r.bucket, key: r.key, version: upload.version };
  let stored: StoredObject;
  let used: PartRow[];
  try {
    const byNumber = new Map(claimed.map((p) => [p.part_number, p]));
    used = wanted.map((w) => {
      const p = byNumber.get(w.n);
      if (!p || unquote(p.etag) !== w.etag) throw s3Errors.invalidPart(w.n);
      return p;
    });
    used.forEach((p, i) => {
      if (i < used.length - 1 && Number(p.size) < MIN_PART_SIZE) throw s3Errors.entityTooSmall();
    });
    const bucket = await bucketLimits(r.project, r.bucket);
    const limit = effectiveLimit(r.globalLimit, bucket.fileSizeLimit, false);
    const total = used.reduce((s, p) => s + Number(p.size), 0);
    if (total > limit) throw errors.entityTooLarge();
    const backend = r.backend;
    async function* concatenated(): AsyncGenerator<Buffer> {
      for (const p of used) {
        const part = await backend.get({ bucket: r.bucket, key: r.key, version: p.version });
        if (!part) throw s3Errors.invalidPart(p.part_number);
        try {
          for await (const chunk of part) yield chunk as Buffer;
        } finally {
          part.destroy();
        }
      }
    }
    stored = await backend.put(finalLoc, Readable.from(concatenated()), {
      contentType: upload.content_type ?? 'application/octet-stream',
      cacheControl: upload.cache_control ?? 'no-cache',
      maxBytes: limit,
      limitError: errors.entityTooLarge,
    });
  } catch (err) {
    await release();
    throw err;
  }

  const metadata: SystemMetadata = {
    eTag: stored.eTag,
    size: stored.size,
    mimetype: upload.content_type ?? 'application/octet-stream',
    cacheControl: upload.cache_control ?? 'no-cache',
    lastModified: stored.lastModified.toISOString(),
    contentLength: stored.size,
    httpStatusCode: 200,
  };
  let committed: { previousVersion: string | null };
  try {
    committed = await commitWrite(
      r.project,
      r.caller,
      OPERATIONS.S3_COMPLETE_MULTIPART,
      {
        bucket: r.bucket,
        key: r.key,
        owner: ownerUuid(r.caller),
        ownerId: r.caller.sub ?? null,
        metadata,
        userMetadata: upload.user_metadata,
        version: upload.version,
      },
      true,
    );
  } catch (err) {
    await r.backend.delete([finalLoc]).catch(() => {});
    await release();
    throw err;
  }
  const parts = await admin(r, OPERATIONS.S3_COMPLETE_MULTIPART, (db) =>
    deleteUploadReturningParts(db, upload.id),
  );
  const garbage = parts.map((p) => ({ bucket: r.bucket, key: r.key, version: p.version }));
  if (committed.previousVersion && committed.previousVersion !== upload.version)
    garbage.push({ ...finalLoc, version: committed.previousVersion });
  if (garbage.length) await r.backend.delete(garbage).catch(() => {});
  const row = await findObject(r.project, SERVICE, OPERATIONS.S3_COMPLETE_MULTIPART, r.bucket, r.key);
  return sendXml(
    r,
    200,
    toXml('CompleteMultipartUploadResult', {
      Location: `/${r.bucket}/${r.key}`,
      Bucket: r.bucket,
      Key: r.key,
      ETag: row?.metadata?.eTag ?? stored.eTag,
    }),
  );
}

export async function abortMultipartUpload(r: S3Request, uploadId: string): Promise<unknown> {
  assertKey(r.key);
  const upload = await loadUpload(r, uploadId, OPERATIONS.S3_ABORT_MULTIPART);
  const parts = await admin(r, OPERATIONS.S3_ABORT_MULTIPART, async (db) => {
    // Lock first (a part being added commits before we go on), then read the parts, then delete.
    if (!(await lockClaimableUpload(db, upload.id))) throw s3Errors.noSuchUpload();
    const p = await selectPartVersions(db, upload.id);
    await deleteUpload(db, upload.id);
    return p;
  });
  if (parts.length)
    await r.backend
      .delete(parts.map((p) => ({ bucket: r.bucket, key: r.key, version: p.version })))
      .catch(() => {});
  return r.reply.code(204).send();
}

export async function listParts(r: S3Request, uploadId: string): Promise<unknown> {
  assertKey(r.key);
  const upload = await loadUpload(r, uploadId, OPERATIONS.S3_LIST_PARTS);
  const markerText = q(r, 'part-number-marker') ?? '0';
  const maxText = q(r, 'max-parts') ?? '1000';
  if (!/^\d{1,5}$/.test(markerText) || !/^\d{1,5}$/.test(maxText))
    throw s3Errors.invalidArgument('part-number-marker and max-parts must be integers');
  const marker = Number(markerText);
  const max = Math.min(Number(maxText), 1000);
  const rows = await admin(r, OPERATIONS.S3_LIST_PARTS, (db) =>
    selectPartsPage(db, upload.id, marker, max + 1),
  );
  const truncated = rows.length > max;
  const page = rows.slice(0, max);
  return sendXml(
    r,
    200,
    toXml('ListPartsResult', {
      Bucket: r.bucket,
      Key: r.key,
      UploadId: upload.id,
      PartNumberMarker: marker,
      ...(truncated ? { NextPartNumberMarker: page[page.length - 1]?.part_number } : {}),
      MaxParts: max,
      IsTruncated: truncated,
      Part: page.map((p) => ({
        PartNumber: p.part_number,
        LastModified: new Date(p.created_at).toISOString(),
        ETag: p.etag,
        Size: Number(p.size),
      })),
      StorageClass: 'STANDARD',
    }),
  );
}
