/**
 * Resumable upload ids, as the reference names them: `<bucket>/<key>/<version>`; in URLs the id is
 * base64url-encoded (one path segment). The version is the object version the upload will become.
 */
import { isValidBucketName, isValidKey } from '../keys.js';

const VERSION = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface UploadId {
  bucket: string;
  key: string;
  version: string;
}

export function formatUploadId(u: UploadId): string {
  return `${u.bucket}/${u.key}/${u.version}`;
}

/** undefined when `id` is not a well-formed upload id. */
export function parseUploadId(id: string): UploadId | undefined {
  const first = id.indexOf('/');
  const last = id.lastIndexOf('/');
  if (first <= 0 || last <= first) return undefined;
  const u = { bucket: id.slice(0, first), key: id.slice(first + 1, last), version: id.slice(last + 1) };
  if (!isValidBucketName(u.bucket) || !isValidKey(u.key) || !VERSION.test(u.version)) return undefined;
  return u;
}

export function toUrlSegment(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

/** The upload id named by a URL segment, when it is one. */
export function fromUrlSegment(segment: string): string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(segment)) return undefined;
  const id = Buffer.from(segment, 'base64url').toString('utf8');
  return parseUploadId(id) ? id : undefined;
}

/** The TUS extensions both data stores (file and S3) implement. */
export const TUS_EXTENSIONS = [
  'creation',
  'creation-with-upload',
  'creation-defer-length',
  'termination',
  'expiration',
] as const;
