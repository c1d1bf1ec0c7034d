/**
 * SQL of S3 multipart uploads: storage.s3_multipart_uploads and its parts. The callers run these
 * as the service role (s3/multipart.ts checks the upload's creator itself); each function runs on
 * the connection given.
 *
 * `upload_signature` is '' while parts may be added, 'completing:<epoch>' while a complete runs.
 * A claim older than an hour belongs to a process that died mid-complete: it may be taken over
 * (complete again, or abort).
 */
import type { Db } from './tx.js';

const CLAIMABLE = `(upload_signature = '' or (upload_signature like 'completing:%'
  and to_timestamp(split_part(upload_signature, ':', 2)::double precision) < now() - interval '1 hour'))`;

export interface UploadRow {
  id: string;
  bucket_id: string;
  key: string;
  version: string;
  owner_id: string | null;
  content_type: string | null;
  cache_control: string | null;
  user_metadata: Record<string, unknown> | null;
  upload_signature: string;
}

export interface PartRow {
  part_number: number;
  etag: string;
  size: string;
  version: string;
  created_at: Date;
}

export async function selectUpload(
  db: Db,
  id: string,
  bucket: string,
  key: string,
): Promise<UploadRow | undefined> {
  return (
    await db.query<UploadRow>(
      `select id, bucket_id, key, version, owner_id, content_type, cache_control, user_metadata, upload_signature
         from storage.s3_multipart_uploads where id = $1 and bucket_id = $2 and key = $3`,
      [id, bucket, key],
    )
  ).rows[0];
}

export interface UploadInsert {
  id: string;
  bucket: string;
  key: string;
  /** The version the completed object's bytes will have. */
  version: string;
  ownerId: string | null;
  contentType: string;
  cacheControl: string;
  userMetadata: Record<string, unknown>;
}

export async function insertUpload(db: Db, u: UploadInsert): Promise<void> {
  await db.query(
    `insert into storage.s3_multipart_uploads (id, bucket_id, key, version, owner_id, content_type, cache_control, user_metadata)
       values ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      u.id,
      u.bucket,
      u.key,
      u.version,
      u.ownerId,
      u.contentType,
      u.cacheControl,
      JSON.stringify(u.userMetadata),
    ],
  );
}

/**
 * Locks the upload row until the transaction ends if parts may still be added to it (so a
 * complete or abort cannot run in between); false when it is gone or being completed.
 */
export async function lockOpenUpload(db: Db, id: string): Promise<boolean> {
  const live = await db.query(
    `select 1 from storage.s3_multipart_uploads where id = $1 and upload_signature = '' for update`,
    [id],
  );
  return (live.rowCount ?? 0) > 0;
}

/** Locks the upload row if it is open or its complete was abandoned; false when neither. */
export async function lockClaimableUpload(db: Db, id: string): Promise<boolean> {
  const live = await db.query(
    `select 1 from storage.s3_multipart_uploads where id = $1 and ${CLAIMABLE} for update`,
    [id],
  );
  return (live.rowCount ?? 0) > 0;
}

/** Marks the upload as being completed now; false when another complete holds it. */
export async function claimUpload(db: Db, id: string): Promise<boolean> {
  const c = await db.query(
    `update storage.s3_multipart_uploads set upload_signature = 'completing:' || extract(epoch from now())
       where id = $1 and ${CLAIMABLE}`,
    [id],
  );
  return (c.rowCount ?? 0) > 0;
}

/** Gives a claimed upload back (its complete failed): parts may be added again. */
export async function releaseUpload(db: Db, id: string): Promise<void> {
  await db.query(`update storage.s3_multipart_uploads set upload_signature = '' where id = $1`, [id]);
}

export async function deleteUpload(db: Db, id: string): Promise<void> {
  await db.query('delete from storage.s3_multipart_uploads where id = $1', [id]);
}

/** Deletes the upload (its parts go with it); returns the versions its parts had. */
export async function deleteUploadReturningParts(db: Db, id: string): Promise<{ version: string }[]> {
  return (
    await db.query<{ version: string }>(
      `with d as (delete from storage.s3_multipart_uploads where id = $1)
         select version from storage.s3_multipart_uploads_parts where upload_id = $1`,
      [id],
    )
  ).rows;
}

/** The version of the bytes of part `partNumber`, if that part was uploaded. */
export async function selectPartVersion(
  db: Db,
  uploadId: string,
  partNumber: number,
): Promise<string | undefined> {
  return (
    await db.query<{ version: string }>(
      'select version from storage.s3_multipart_uploads_parts where upload_id = $1 and part_number = $2',
      [uploadId, partNumber],
    )
  ).rows[0]?.version;
}

export interface PartUpsert {
  uploadId: string;
  partNumber: number;
  size: number;
  bucket: string;
  key: string;
  etag: string;
  ownerId: string | null;
  version: string;
}

/** Records a part (replacing the record of the same part number). */
export async function upsertPart(db: Db, p: PartUpsert): Promise<void> {
  await db.query(
    `insert into storage.s3_multipart_uploads_parts (upload_id, size, part_number, bucket_id, key, etag, owner_id, version)
         values ($1, $2, $3, $4, $5, $6, $7, $8)
         on conflict (upload_id, part_number) do update set size = excluded.size, etag = excluded.etag,
           version = excluded.version, created_at = now()`,
    [p.uploadId, p.size, p.partNumber, p.bucket, p.key, p.etag, p.ownerId, p.version],
  );
}

/** The bytes of all the upload's parts together. */
export async function sumPartSizes(db: Db, uploadId: string): Promise<number> {
  const total = await db.query<{ n: string }>(
    'select coalesce(sum(size), 0) as n from storage.s3_multipart_uploads_parts where upload_id = $1',
    [uploadId],
  );
  return Number(total.rows[0]?.n ?? 0);
}

export async function setInProgressSize(db: Db, id: string, size: number): Promise<void> {
  await db.query('update storage.s3_multipart_uploads set in_progress_size = $2 where id = $1', [id, size]);
}

export async function selectParts(db: Db, uploadId: string): Promise<PartRow[]> {
  return (
    await db.query<PartRow>(
      'select part_number, etag, size, version, created_at from storage.s3_multipart_uploads_parts where upload_id = $1',
      [uploadId],
    )
  ).rows;
}

export async function selectPartVersions(db: Db, uploadId: string): Promise<{ version: string }[]> {
  return (
    await db.query<{ version: string }>(
      'select version from storage.s3_multipart_uploads_parts where upload_id = $1',
      [uploadId],
    )
  ).rows;
}

/** Up to `limit` parts numbered above `marker`, by number. */
export async function selectPartsPage(
  db: Db,
  uploadId: string,
  marker: number,
  limit: number,
): Promise<PartRow[]> {
  return (
    await db.query<PartRow>(
      `select part_number, etag, size, version, created_at from storage.s3_multipart_uploads_parts
         where upload_id = $1 and part_number > $2 order by part_number limit $3`,
      [uploadId, marker, limit],
    )
  ).rows;
}

export interface UploadListRow {
  id: string;
  key: string;
  owner_id: string | null;
  created_at: Date;
}

export interface UploadsPage {
  bucket: string;
  prefix: string;
  /** Past this key, or (with `afterUpload`) past that upload of this key. */
  afterKey: string;
  afterUpload: string;
  limit: number;
  /** Only the uploads this user created; null: everyone's. */
  owner: string | null;
}

/** A bucket's uploads under a prefix, by key (collation "C"), then creation time and id. */
export async function selectUploadsPage(db: Db, p: UploadsPage): Promise<UploadListRow[]> {
  return (
    await db.query<UploadListRow>(
      `select id, key, owner_id, created_at from storage.s3_multipart_uploads
         where bucket_id = $1 and starts_with(key, $2) and ($6::text is null or owner_id = $6)
           and (key > $3 or (key = $3 and $4 <> '' and (created_at, id) > (
             select created_at, id from storage.s3_multipart_uploads where id = $4 and bucket_id = $1)))
         order by key collate "C", created_at, id limit $5`,
      [p.bucket, p.prefix, p.afterKey, p.afterUpload, p.limit, p.owner],
    )
  ).rows;
}
