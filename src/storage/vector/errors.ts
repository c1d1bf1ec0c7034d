/**
 * Errors of the vector routes, in the Storage envelope with upstream's codes and texts for them.
 * Unlike the other Storage routes, the HTTP status is the logical one (upstream registers these
 * routes with `respectStatusCode`): 404 for a missing bucket or index, 409 for a name taken.
 */
import { StorageError } from '../errors.js';

const e = (code: string, status: number, message: string, label = code) =>
  new StorageError(code, status, label, message, status);

export const vectorErrors = {
  notFound: (name: string) => e('NotFoundException', 404, `resource "${name}" not found`),
  conflict: (resource: 'vector bucket' | 'vector index', name: string) =>
    e('ConflictException', 409, `${resource} "${name}" already exists`),
  bucketNotEmpty: (name: string) => e('VectorBucketNotEmpty', 400, `Vector Bucket "${name}" not empty`),
  maxBuckets: (max: number) =>
    e(
      'S3VectorMaxBucketsExceeded',
      400,
      `Maximum number of buckets exceeded. Max allowed is ${max}. Contact support to increase your limit.`,
    ),
  maxIndexes: (max: number) =>
    e(
      'S3VectorMaxIndexesExceeded',
      400,
      `Maximum number of indexes exceeded. Max allowed is ${max}. Contact support to increase your limit.`,
    ),
  invalidParameter: (message: string) => e('InvalidParameter', 400, message),
  /** The caller is not the service role (or has no valid token): 403 as upstream's role guard. */
  accessDenied: (message: string) => e('AccessDenied', 403, message, 'Unauthorized'),
};
