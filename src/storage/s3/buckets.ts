/**
 * S3 bucket operations (ListBuckets, Create/Delete/HeadBucket) and ListObjectsV2 with prefix,
 * delimiter, start-after and continuation tokens, all under the caller's role (RLS decides what
 * is seen). Keys are listed in byte order (collation "C"), as S3 lists them; a folder (common
 * prefix) is skipped over in one step by continuing after `prefix + U+10FFFF`.
 */
import { SERVICE } from '../auth.js';
import { assertNewBucketName, assertBucketName } from '../keys.js';
import { hasKeyAfter, inTx, selectKeysAfter } from '../database/index.js';
import { OPERATIONS } from '../operations.js';
import { createBucket, deleteBucket, getBucket, listBuckets } from '../service/buckets.js';
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
  const bytes = Buffer.from(t, 'base64url');
  const s = bytes.toString('utf8');
  // Only what encodeToken makes: valid UTF-8 (round-trips), no NUL (PostgreSQL text cannot hold one).
  if (!s.startsWith('v1:') || s.includes('\u0000') || !Buffer.from(s, 'utf8').equals(bytes))
    throw s3Errors.invalidArgument('The continuation token provided is incorrect');
  return s.slice(3);
}

const encodeToken = (after: string) => Buffer.from(`v1:${after}`, 'utf8').toString('base64url');

/** Past every key starting with `p` in collation "C". */
const AFTER_PREFIX = '\u{10FFFF}';

interface ListEntry {
  Key: string;
  LastModified: string;
  ETag: string;
  Size: number;
  StorageClass: string;
}

interface ListPage {
  contents: ListEntry[];
  prefixes: string[];
  truncated: boolean;
  /** Where the next page starts (exclusive). */
  next?: string;
  /** The last key or common prefix of this page. */
  last?: string;
}

function maxKeysOf(r: S3Request): number {
  const text = q(r, 'max-keys');
  const cap = r.platform.config.s3Protocol.maxKeys;
  if (text === undefined) return cap;
  if (!/^\d+$/.test(text))
    throw s3Errors.invalidArgument('Provided max-keys not an integer or within integer range');
  return Math.min(Number(text), cap);
}

/** One page of keys and common prefixes after `after`, as the caller sees them. */
async function listPage(
  r: S3Request,
  prefix: string,
  delimiter: string,
  after: string,
  maxKeys: number,
): Promise<ListPage> {
  const page: ListPage = { contents: [], prefixes: [], truncated: false };
  const count = () => page.contents.length + page.prefixes.length;
  // The bucket must exist; which of its objects are listed is RLS's business.
  await getBucket(r.project, SERVICE, r.bucket);
  await inTx(r.project, r.caller, OPERATIONS.S3_LIST_OBJECT, async (db) => {
    let cursor = after;
    while (count() < maxKeys) {
      const want = maxKeys - count() + 1;
      const rows = await selectKeysAfter(db, r.bucket, prefix, cursor, want);
      if (rows.length === 0) return;
      let jumped = false;
      for (const row of rows) {
        if (count() === maxKeys) {
          page.truncated = true;
          return;
        }
        const rest = row.name.slice(prefix.length);
        const i = delimiter ? rest.indexOf(delimiter) : -1;
        if (i >= 0) {
          const common = prefix + rest.slice(0, i + delimiter.length);
          page.prefixes.push(common);
          page.last = common;
          cursor = common + AFTER_PREFIX;
          page.next = cursor;
          jumped = true;
          break;
        }
        page.contents.push({
          Key: row.name,
          LastModified: new Date(row.metadata?.lastModified ?? row.updated_at).toISOString(),
          ETag: row.metadata?.eTag ?? '',
          Size: Number(row.metadata?.size ?? 0),
          StorageClass: 'STANDARD',
        });
        cursor = row.name;
        page.last = cursor;
        page.next = cursor;
      }
      if (!jumped && rows.length < want) return;
    }
    // The page is full: is there anything after it?
    page.truncated = await hasKeyAfter(db, r.bucket, prefix, cursor);
  });
  return page;
}

/** What both ListObjects versions read from the request. */
interface Listing {
  prefix: string;
  delimiter: string;
  maxKeys: number;
  /** `encoding-type=url`: keys and prefixes percent-encoded (slashes kept). */
  url: boolean;
  /** A key or prefix as the answer shows it. */
  enc: (s: string) => string;
}

function listingOf(r: S3Request): Listing {
  assertBucketName(r.bucket);
  const url = q(r, 'encoding-type') === 'url';
  return {
    prefix: q(r, 'prefix') ?? '',
    delimiter: q(r, 'delimiter') ?? '',
    maxKeys: maxKeysOf(r),
    url,
    enc: (s) => (url ? encodeURIComponent(s).replace(/%2F/g, '/') : s),
  };
}

/** Where the two versions differ: elements after Prefix, after Delimiter and after IsTruncated. */
interface VersionElements {
  afterPrefix?: Record<string, unknown>;
  afterDelimiter?: Record<string, unknown>;
  afterTruncated?: Record<string, unknown>;
}

function sendListing(r: S3Request, l: Listing, page: ListPage, v: VersionElements): unknown {
  const { enc } = l;
  return sendXml(
    r,
    200,
    toXml('ListBucketResult', {
      Name: r.bucket,
      Prefix: enc(l.prefix),
      ...v.afterPrefix,
      ...(l.delimiter ? { Delimiter: enc(l.delimiter) } : {}),
      ...v.afterDelimiter,
      MaxKeys: l.maxKeys,
      ...(l.url ? { EncodingType: 'url' } : {}),
      IsTruncated: page.truncated,
      ...v.afterTruncated,
      Contents: page.contents.map((c) => ({ ...c, Key: enc(c.Key) })),
      CommonPrefixes: page.prefixes.map((p) => ({ Prefix: enc(p) })),
    }),
  );
}

export async function listObjectsV2(r: S3Request): Promise<unknown> {
  const l = listingOf(r);
  const startAfter = q(r, 'start-after') ?? '';
  const token = q(r, 'continuation-token');
  const after = token !== undefined ? decodeToken(token) : startAfter;
  const page = await listPage(r, l.prefix, l.delimiter, after, l.maxKeys);
  const { enc } = l;
  return sendListing(r, l, page, {
    afterDelimiter: {
      ...(startAfter ? { StartAfter: enc(startAfter) } : {}),
      ...(token !== undefined ? { ContinuationToken: token } : {}),
      KeyCount: page.contents.length + page.prefixes.length,
    },
    afterTruncated:
      page.truncated && page.next !== undefined ? { NextContinuationToken: encodeToken(page.next) } : {},
  });
}

/**
 * ListObjects (v1): `marker` instead of a token. A marker that is a common prefix (as NextMarker is
 * when a page ends on one) continues after everything under it, as S3 does.
 */
export async function listObjectsV1(r: S3Request): Promise<unknown> {
  const l = listingOf(r);
  const { prefix, delimiter } = l;
  const marker = q(r, 'marker') ?? '';
  const rest = marker.startsWith(prefix) ? marker.slice(prefix.length) : '';
  const markerIsPrefix =
    delimiter !== '' &&
    rest.endsWith(delimiter) &&
    rest.indexOf(delimiter) === rest.length - delimiter.length;
  const page = await listPage(
    r,
    prefix,
    delimiter,
    markerIsPrefix ? marker + AFTER_PREFIX : marker,
    l.maxKeys,
  );
  const { enc } = l;
  return sendListing(r, l, page, {
    afterPrefix: { Marker: enc(marker) },
    afterTruncated: page.truncated && page.last !== undefined ? { NextMarker: enc(page.last) } : {},
  });
}
