/**
 * Bucket names and object keys (supabase/storage's key rules). Keys take the reference's character set. Empty
 * segments are keys of their own (`a//b`, `/a`, `a/` differ from `a/b` and `a`), as the reference
 * accepts them on each of its backends; the backends spell them so that they never collapse into
 * another path (backend/key-segments.ts). `.` and `..` segments are refused, as the reference's
 * file backend refuses them, so a key never names a parent or current directory on any backend.
 * Every segment is at most 255 bytes, a valid file name whichever backend holds it.
 */
import { errors } from './errors.js';

const BUCKET_CHARS = /^[A-Za-z0-9_!.*'() &$=@;:+,?-]+$/;
/** A key segment names a folder or file on the file backend: at most NAME_MAX bytes. */
const MAX_SEGMENT_BYTES = 255;
const KEY_CHARS = /^[A-Za-z0-9_!.*'() &$=@;:+,?/-]+$/;

/** Route words that win over a `{bucket}` segment; such buckets would be unreachable. */
const RESERVED_BUCKETS = new Set([
  'public',
  'authenticated',
  'sign',
  'info',
  'list',
  'list-v2',
  'move',
  'copy',
  'upload',
]);

export function isValidBucketName(name: unknown): name is string {
  return (
    typeof name === 'string' &&
    name.length >= 1 &&
    name.length <= 100 &&
    BUCKET_CHARS.test(name) &&
    name.trim() === name &&
    name !== '.' &&
    name !== '..' &&
    !name.endsWith('--table-s3')
  );
}

/** For bucket create: also refuses the route words. */
export function assertNewBucketName(name: unknown): asserts name is string {
  if (!isValidBucketName(name) || RESERVED_BUCKETS.has(name)) throw errors.invalidBucketName();
}

export function assertBucketName(name: unknown): asserts name is string {
  if (!isValidBucketName(name)) throw errors.invalidBucketName();
}

export function isValidKey(key: unknown): key is string {
  if (typeof key !== 'string' || key.length === 0 || key.length > 1024 || !KEY_CHARS.test(key)) return false;
  return key
    .split('/')
    .every((seg) => seg !== '.' && seg !== '..' && Buffer.byteLength(seg) <= MAX_SEGMENT_BYTES);
}

export function assertKey(key: unknown): asserts key is string {
  if (!isValidKey(key)) throw errors.invalidKey(String(key));
}

/** Zero-byte folder markers created by the dashboard: upload limit 0, no MIME check. */
export function isFolderPlaceholder(key: string): boolean {
  return key === '.emptyFolderPlaceholder' || key.endsWith('/.emptyFolderPlaceholder');
}
