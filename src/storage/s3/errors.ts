/**
 * S3 protocol errors: the Storage errors plus the ones only this surface has, with the codes and
 * texts the reference (and Amazon, whose texts it reuses) sends. On this surface the HTTP status is
 * the logical one (`status`), as the reference's S3 error handler does.
 */
import { StorageError } from '../errors.js';

const e = (code: string, status: number, message: string) =>
  new StorageError(code, status, code, message, status);

export const s3Errors = {
  signatureDoesNotMatch: (session: boolean) =>
    e(
      'SignatureDoesNotMatch',
      403,
      session
        ? 'The request signature we calculated does not match the signature you provided, Check your credentials. The session token should be a valid JWT token'
        : 'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    ),
  invalidSignature: (message: string) => e('InvalidSignature', 400, message),
  invalidAccessKeyId: () =>
    e('InvalidAccessKeyId', 403, 'The Access Key Id you provided does not exist in our records.'),
  accessDenied: (message: string) => e('AccessDenied', 403, message),
  /** The reference's ExpiredSignature (presigned URL past X-Amz-Expires). */
  expired: () => e('ExpiredToken', 400, 'The provided token has expired.'),
  skewed: () =>
    e(
      'RequestTimeTooSkewed',
      403,
      'The difference between the request time and the current time is too large.',
    ),
  invalidRegion: (region: string) =>
    e(
      'AuthorizationHeaderMalformed',
      400,
      `The authorization header is malformed; the region '${region}' is wrong`,
    ),
  noSuchUpload: () =>
    e(
      'NoSuchUpload',
      404,
      'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
    ),
  invalidPart: (n: number) =>
    e('InvalidPart', 400, `One or more of the specified parts could not be found (part ${n}).`),
  invalidPartOrder: () =>
    e(
      'InvalidPartOrder',
      400,
      'The list of parts was not in ascending order. Parts must be ordered by part number.',
    ),
  /** CompleteMultipartUpload with a part other than the last under 5 MiB (AWS's code and text). */
  entityTooSmall: () =>
    e('EntityTooSmall', 400, 'Your proposed upload is smaller than the minimum allowed object size.'),
  /** A POST policy form that is not well-formed (AWS MalformedPOSTRequest). */
  malformedPost: (message: string) => e('MalformedPOSTRequest', 400, message),
  invalidArgument: (message: string) => e('InvalidArgument', 400, message),
  invalidUri: () => e('InvalidURI', 400, "Couldn't parse the specified URI."),
  malformedXml: () =>
    e(
      'MalformedXML',
      400,
      'The XML you provided was not well-formed or did not validate against our published schema.',
    ),
  notImplemented: (what: string) => e('NotImplemented', 501, `${what} is not implemented`),
  methodNotAllowed: () =>
    e('MethodNotAllowed', 405, 'The specified method is not allowed against this resource.'),
};
