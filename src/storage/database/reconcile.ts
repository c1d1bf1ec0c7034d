/**
 * SQL of storage reconciliation (reconcile.ts): which backend versions a row still refers to.
 * Run as the service role; each function runs on the connection given.
 */
import type { Db } from './tx.js';

/**
 * Every version a row refers to: committed objects, and the parts (and target) of S3 multipart
 * uploads still in progress, whose bytes are versions of the key that no object row names yet.
 */
const LIVE_VERSIONS = `live(bucket_id, name, version) as (
         select bucket_id, name, version from storage.objects
         union all select bucket_id, key, version from storage.s3_multipart_uploads_parts
         union all select bucket_id, key, version from storage.s3_multipart_uploads)`;

export interface LiveVersion {
  bucket_id: string;
  name: string;
  version: string | null;
}

/** The versions rows refer to at any of the keys given. */
export async function selectLiveVersions(
  db: Db,
  keys: ReadonlyArray<{ bucket: string; key: string }>,
): Promise<LiveVersion[]> {
  const r = await db.query<LiveVersion>(
    `with c(bucket_id, name) as (select * from unnest($1::text[], $2::text[]))
       , ${LIVE_VERSIONS}
       select l.bucket_id, l.name, l.version from live l join c using (bucket_id, name)`,
    [keys.map((c) => c.bucket), keys.map((c) => c.key)],
  );
  return r.rows;
}

/** Whether a row refers to this version of the key. */
export async function isVersionLive(
  db: Db,
  loc: { bucket: string; key: string; version: string },
): Promise<boolean> {
  const r = await db.query(
    `with ${LIVE_VERSIONS}
             select 1 from live where bucket_id = $1 and name = $2 and version = $3`,
    [loc.bucket, loc.key, loc.version],
  );
  return (r.rowCount ?? 0) > 0;
}
