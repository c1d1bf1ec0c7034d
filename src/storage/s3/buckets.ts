/**
 * S3 bucket operations (ListBuckets, Create/Delete/HeadBucket) and ListObjectsV2 with prefix,
 * delimiter, start-after and continuation tokens, all under the caller's role (RLS decides what
 * is seen). Keys are listed in byte order (collation "C"), as S3 lists them; a folder (common
 * prefix) is skipped over in one step by continuing after `prefix + U+10FFFF`.
 */
import { SERVICE } from '../auth.js';
import { assertNewBucketName, assertBucketName } from '../keys.js';
import { createBucket, deleteBucket, getBucket, listBuckets } from '../service/buckets.js';
import { inTx } from '../service/tx.js';
import type { SystemMetadata } from '../service/objects.js';
import { q, sendXml, type S3Request } from './context.js';
import { s3Errors } from './errors.js';
import { toXml } from './xml.js';

const OWNER = { ID: 'strata', DisplayName: 'strata' };

export async function listAllBuckets(r: S3Request): Promise<unknown> {
  const rows = await listBuckets(r.project, r.caller, { sortColumn: 'id', sortOrder: 'asc' });
  return sendXml(
    r,
    200,
    toXml('ListAllMyBucketsResult', {
      Owner: OWNER,
      Buckets: {
        Bucket: rows.map((b) => ({ Name: b.id, CreationDate: new Date(b.created_at).toISOString() })),
      },
    }),
  );
}

export async function createOne(r: S3Request): Promise<unknown> {
  assertNewBucketName(r.bucket);
  await createBucket(r.project, r.caller, {
    id: r.bucket,
    name: r.bucket,
    public: false,
    fileSizeLimit: null,
    allowedMimeTypes: null,
  });
  r.reply.header('location', `/${r.bucket}`);
  return r.reply.code(200).send();
}

export async function deleteOneBucket(r: S3Request): Promise<unknown> {
  assertBucketName(r.bucket);
  await deleteBucket(r.project, r.caller, r.bucket);
  return r.reply.code(204).send();
}

export async function headBucket(r: S3Request): Promise<unknown> {
  assertBucketName(r.bucket);
  await getBucket(r.project, r.caller, r.bucket);
  r.reply.header('x-amz-bucket-region', r.platform.config.s3Protocol.region);
  return r.reply.code(200).send();
}

function decodeToken(t: string): string {
  const s = Buffer.from(t, 'base64url').toString('utf8');
  if (!s.startsWith('v1:')) throw s3Errors.invalidArgument('The continuation token provided is incorrect');
  return s.slice(3);
}

const encodeToken = (after: string) => Buffer.from(`v1:${after}`, 'utf8').toString('base64url');

/** Past every key starting with `p` in collation "C". */
const AFTER_PREFIX = '\u{10FFFF}';

export async function listObjectsV2(r: S3Request): Promise<unknown> {
  assertBucketName(r.bucket);
  const prefix = q(r, 'prefix') ?? '';
  const delimiter = q(r, 'delimiter') ?? '';
  const startAfter = q(r, 'start-after') ?? '';
  const token = q(r, 'continuation-token');
  const urlEncoding = q(r, 'encoding-type') === 'url';
  const maxKeysText = q(r, 'max-keys');
  const cap = r.platform.config.s3Protocol.maxKeys;
  let maxKeys = cap;
  if (maxKeysText !== undefined) {
    if (!/^\d+$/.test(maxKeysText))
      throw s3Errors.invalidArgument('Provided max-keys not an integer or within integer range');
    maxKeys = Math.min(Number(maxKeysText), cap);
  }
  const after = token !== undefined ? decodeToken(token) : startAfter;

  const contents: Array<{
    Key: string;
    LastModified: string;
    ETag: string;
    Size: number;
    StorageClass: string;
  }> = [];
  const prefixes: string[] = [];
  let truncated = false;
  let next: string | undefined;

  // The bucket must exist; which of its objects are listed is RLS's business.
  await getBucket(r.project, SERVICE, r.bucket);
  await inTx(r.project, r.caller, 'storage.s3.list_objects_v2', async (db) => {
    let cursor = after;
    while (contents.length + prefixes.length < maxKeys) {
      const want = maxKeys - contents.length - prefixes.length + 1;
      const { rows } = await db.query<{ name: string; metadata: SystemMetadata | null; updated_at: Date }>(
        `select name, metadata, updated_at from storage.objects
         where bucket_id = $1 and starts_with(name, $2) and name collate "C" > $3
         order by name collate "C" limit $4`,
        [r.bucket, prefix, cursor, want],
      );
      if (rows.length === 0) return;
      let jumped = false;
      for (const row of rows) {
        if (contents.length + prefixes.length === maxKeys) {
          truncated = true;
          return;
        }
        const rest = row.name.slice(prefix.length);
        const i = delimiter ? rest.indexOf(delimiter) : -1;
        if (i >= 0) {
          const common = prefix + rest.slice(0, i + delimiter.length);
          prefixes.push(common);
          cursor = common + AFTER_PREFIX;
          next = cursor;
          jumped = true;
          break;
        }
        contents.push({
          Key: row.name,
          LastModified: new Date(row.metadata?.lastModified ?? row.updated_at).toISOString(),
          ETag: row.metadata?.eTag ?? '',
          Size: Number(row.metadata?.size ?? 0),
          StorageClass: 'STANDARD',
        });
        cursor = row.name;
        next = cursor;
      }
      if (!jumped && rows.length < want) return;
    }
    // The page is full: is there anything after it?
    const more = await db.query(
      `select 1 from storage.objects where bucket_id = $1 and starts_with(name, $2) and name collate "C" > $3 limit 1`,
      [r.bucket, prefix, cursor],
    );
    truncated = (more.rowCount ?? 0) > 0;
  });

  const enc = (s: string) => (urlEncoding ? encodeURIComponent(s).replace(/%2F/g, '/') : s);
  return sendXml(
    r,
    200,
    toXml('ListBucketResult', {
      Name: r.bucket,
      Prefix: enc(prefix),
      ...(delimiter ? { Delimiter: enc(delimiter) } : {}),
      ...(startAfter ? { StartAfter: enc(startAfter) } : {}),
      ...(token !== undefined ? { ContinuationToken: token } : {}),
      KeyCount: contents.length + prefixes.length,
      MaxKeys: maxKeys,
      ...(urlEncoding ? { EncodingType: 'url' } : {}),
      IsTruncated: truncated,
      ...(truncated && next !== undefined ? { NextContinuationToken: encodeToken(next) } : {}),
      Contents: contents.map((c) => ({ ...c, Key: enc(c.Key) })),
      CommonPrefixes: prefixes.map((p) => ({ Prefix: enc(p) })),
    }),
  );
}
