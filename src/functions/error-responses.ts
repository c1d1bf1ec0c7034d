/**
 * The platform's answers when an invocation does not reach (or is cut off from) the function:
 * a JSON body {code, message} and, for runtime errors, the `sb-error-code` header, as documented
 * for the hosted platform's Edge Functions (status codes / error codes pages).
 */
export interface PlatformError {
  status: number;
  body: { code: string | number; message: string };
  errorCode?: string;
}

const err = (status: number, code: string | number, message: string, errorCode?: string): PlatformError => ({
  status,
  body: { code, message },
  errorCode,
});

export const MISSING_AUTH = err(401, 401, 'Missing authorization header');
export const INVALID_JWT = err(401, 401, 'Invalid JWT');
export const NOT_FOUND = err(404, 'NOT_FOUND', 'Requested function was not found');
export const METHOD_NOT_ALLOWED = err(405, 'METHOD_NOT_ALLOWED', 'Method not allowed');
export const INVALID_SLUG = err(400, 'BAD_REQUEST', 'Invalid function slug');
export const INVALID_HOST = err(400, 'BAD_REQUEST', 'Invalid Host header');
export const TOO_MANY_HEADERS = err(
  431,
  'REQUEST_HEADER_FIELDS_TOO_LARGE',
  'Request has too many header fields',
);
export const REQUEST_TIMEOUT = err(
  408,
  'REQUEST_TIMEOUT',
  'Request body was not received in time',
  'REQUEST_TIMEOUT',
);
export const TOO_LARGE = err(413, 'PAYLOAD_TOO_LARGE', 'Request body is too large');
export const THROTTLED = err(503, 'FUNCTION_THROTTLED', 'Function is throttled', 'FUNCTION_THROTTLED');
export const BOOT_ERROR = err(
  503,
  'BOOT_ERROR',
  'Function failed to start (please check logs)',
  'BOOT_ERROR',
);
export const CAPACITY = err(
  503,
  'WORKER_LIMIT',
  'Too many function workers are running; try again later',
  'WORKER_LIMIT',
);
export const WORKER_LIMIT = err(
  546,
  'WORKER_LIMIT',
  'Function failed due to not having enough compute resources (please check logs)',
  'WORKER_LIMIT',
);
export const TIMEOUT = err(
  504,
  'IDLE_TIMEOUT',
  'Function did not respond in time (please check logs)',
  'IDLE_TIMEOUT',
);
export const WORKER_ERROR = err(
  500,
  'WORKER_ERROR',
  'Function exited due to an error (please check logs)',
  'WORKER_ERROR',
);
