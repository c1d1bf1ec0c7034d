import { isDatabaseUnavailable, unavailableMessage } from '../db/connection-errors.js';

/**
 * The Storage API's error envelope: {statusCode, error, message, code}, statusCode a string with the
 * logical status. HTTP status: 500 for logical 500, otherwise 400 (the reference's legacy rule),
 * except where `httpStatus` says otherwise (403 service-role guard, 416 range, 404 unknown route).
 */
export class StorageError extends Error {
  constructor(
    readonly code: string,
    /** The logical status, sent as a string in `statusCode`. */
    readonly status: number,
    readonly label: string,
    message: string,
    /** The HTTP status when it is not derived from `status`. */
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = 'StorageError';
  }

  /** Headers the error reply carries (set after a download's own headers are removed). */
  headers: Record<string, string> = {};

  withHeader(name: string, value: string): this {
    this.headers[name] = value;
    return this;
  }

  get http(): number {
    return this.httpStatus ?? (this.status >= 500 ? this.status : 400);
  }

  toJSON(): { statusCode: string; error: string; message: string; code: string } {
    return { statusCode: String(this.status), error: this.label, message: this.message, code: this.code };
  }
}

const e = (code: string, status: number, label: string, message: string, httpStatus?: number) =>
  new StorageError(code, status, label, message, httpStatus);

export const errors = {
  noSuchBucket: () => e('NoSuchBucket', 404, 'Bucket not found', 'Bucket not found'),
  noSuchKey: () => e('NoSuchKey', 404, 'not_found', 'Object not found'),
  missingBytes: () => e('NoSuchKey', 404, 'Not found', 'The resource was not found'),
  bucketAlreadyExists: () => e('BucketAlreadyExists', 409, 'Duplicate', 'The resource already exists'),
  keyAlreadyExists: () => e('KeyAlreadyExists', 409, 'Duplicate', 'The resource already exists'),
  resourceAlreadyExists: () => e('ResourceAlreadyExists', 409, 'Duplicate', 'The resource already exists'),
  bucketNotEmpty: () =>
    e('ResourceNotEmpty', 409, 'ResourceNotEmpty', 'The bucket you tried to delete is not empty'),
  entityTooLarge: () =>
    e('EntityTooLarge', 413, 'Payload too large', 'The object exceeded the maximum allowed size'),
  metadataTooLarge: () =>
    e('EntityTooLarge', 413, 'Payload too large', 'The user_metadata exceeded the maximum allowed size'),
  invalidMimeType: (type: string) =>
    e('InvalidMimeType', 415, 'invalid_mime_type', `mime type ${type} is not supported`),
  invalidContentType: () => e('InvalidMimeType', 415, 'invalid_mime_type', 'Invalid Content-Type header'),
  invalidKey: (key: string) => e('InvalidKey', 400, 'InvalidKey', `Invalid key: ${key}`),
  invalidBucketName: () => e('InvalidBucketName', 400, 'Invalid Input', 'Bucket name invalid'),
  accessDenied: (message: string) => e('AccessDenied', 403, 'Unauthorized', message),
  rlsViolation: () => e('AccessDenied', 403, 'Unauthorized', 'new row violates row-level security policy'),
  serviceRoleOnly: (message: string) => e('AccessDenied', 403, 'Unauthorized', message, 403),
  invalidJwt: (message: string) => e('InvalidJWT', 400, 'InvalidJWT', message),
  invalidSignature: (message = 'Invalid signature') =>
    e('InvalidSignature', 400, 'InvalidSignature', message),
  expiredToken: () => e('ExpiredToken', 400, 'ExpiredToken', 'The provided token has expired.'),
  /** A resumable upload's lock was not had in time (another request holds it and does not let go). */
  lockTimeout: () => e('LockTimeout', 503, 'acquiring_lock_timeout', 'acquiring lock timeout'),
  invalidRequest: (message: string) => e('InvalidRequest', 400, 'Error', message),
  noContent: () => e('InvalidRequest', 400, 'InvalidRequest', 'No content provided'),
  invalidFileSize: () =>
    e('InvalidRequest', 400, 'InvalidRequest', 'Invalid file size format, hint: use 20GB / 20MB / 30KB / 3B'),
  invalidParameter: (name: string) =>
    e('InvalidParameter', 400, 'InvalidParameter', `Invalid Parameter ${name}`),
  /** 416, with the object's length in `Content-Range: bytes *\/N` (RFC 9110 §15.5.17). */
  invalidRange: (size: number) =>
    e('InvalidRange', 416, 'invalid_range', 'invalid range provided', 416).withHeader(
      'content-range',
      `bytes */${size}`,
    ),
  tooManyObjectsToEmpty: () =>
    e(
      'InvalidRequest',
      409,
      'InvalidRequest',
      'Unable to empty the bucket because it contains too many objects',
    ),
  relatedMissing: () => e('InvalidRequest', 404, 'InvalidRequest', 'The related resource does not exist'),
  invalidRobotsTag: (why: string) =>
    e('InvalidRequest', 400, 'invalid_x_robots_tag', `Invalid X-Robots-Tag header: ${why}`),
  routeNotFound: (method: string, url: string) =>
    e('InvalidRequest', 404, 'Not Found', `Route ${method}:${url} not found`, 404),
  projectNotFound: () => e('InvalidRequest', 404, 'Not Found', 'Project not found', 404),
  tooManyConnections: () =>
    e('SlowDown', 429, 'too_many_connections', 'Too many connections issued to the database', 429),
  statementTimeout: () =>
    e('DatabaseTimeout', 544, 'DatabaseTimeout', 'The connection to the database timed out', 544),
  databaseUnavailable: (cause?: unknown) =>
    e('DatabaseError', 503, 'Service Unavailable', unavailableMessage(cause), 503),
  database: (sqlState: string) =>
    e('DatabaseError', 500, 'DatabaseError', `database error, code: ${sqlState}`),
  internal: () => e('InternalError', 500, 'Internal', 'Internal Server Error'),
  cdnPurgeNotConfigured: () =>
    e('MissingParameter', 400, 'Error', 'CDN cache purge is not configured (STRATA_STORAGE_CDN_PURGE_URL)'),
  /** The purge endpoint failed or did not answer: the gateway's fault, not ours nor the caller's. */
  cdnPurgeFailed: () => e('CdnPurgeFailed', 502, 'Bad Gateway', 'Error purging cache', 502),
  /** The backend's disk (or quota) is full: 507 on every surface, the object not stored. */
  insufficientStorage: () =>
    e(
      'InsufficientStorage',
      507,
      'Insufficient Storage',
      'There is not enough space left on the storage backend to store the object',
    ),
};

/** Errors of the file system or S3 store under the backend that a caller should be told about plainly. */
export function fromSystemError(err: unknown): StorageError | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  // ENOSPC: no space left; EDQUOT: a quota reached; EFBIG: larger than the file system (or the
  // process's file-size limit) allows.
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'EFBIG') return errors.insufficientStorage();
  if (isStoreFull(err)) return errors.insufficientStorage();
  return undefined;
}

/**
 * Error codes with which S3-compatible stores say they are out of space: 507 InsufficientStorage
 * (the HTTP status any of them may use), MinIO's drive-full and bucket-quota codes, Ceph RGW's quota.
 */
const STORE_FULL_CODES = new Set([
  'InsufficientStorage',
  'XMinioStorageFull',
  'XMinioAdminBucketQuotaExceeded',
  'QuotaExceeded',
]);

/** An error of the S3 store under the backend (an AWS SDK exception) that means it is full. */
function isStoreFull(err: unknown): boolean {
  const e = err as { name?: unknown; Code?: unknown; $metadata?: { httpStatusCode?: unknown } } | undefined;
  if (!e || typeof e !== 'object' || !e.$metadata || typeof e.$metadata !== 'object') return false;
  return (
    e.$metadata.httpStatusCode === 507 ||
    (typeof e.name === 'string' && STORE_FULL_CODES.has(e.name)) ||
    (typeof e.Code === 'string' && STORE_FULL_CODES.has(e.Code))
  );
}

/** PostgreSQL errors the service does not map itself. */
export function fromPgError(err: unknown): StorageError | undefined {
  if (isDatabaseUnavailable(err)) return errors.databaseUnavailable(err);
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return undefined;
  switch (code) {
    case '42501':
      return errors.rlsViolation();
    case '23505':
      return errors.resourceAlreadyExists();
    case '23503':
      return errors.relatedMissing();
    // A NUL or an invalid byte that slipped past input checks: the input is at fault.
    case '22021':
    case '22P05':
      return errors.invalidRequest('The request contains characters that cannot be stored');
    // A number past a column's or parameter's range (e.g. an int list position): the input's fault.
    case '22003':
      return errors.invalidRequest('A number in the request is out of range');
    case '57014':
      return errors.statementTimeout();
    case '53300':
      return errors.tooManyConnections();
    default:
      return errors.database(code);
  }
}

export function isPgCode(err: unknown, code: string): boolean {
  return (err as { code?: unknown })?.code === code;
}

/** Headers of a download that must not survive into an error reply. */
export const DOWNLOAD_HEADERS = [
  'content-length',
  'content-range',
  'content-disposition',
  'accept-ranges',
  'last-modified',
  'x-robots-tag',
  'expires',
];
