/**
 * NUL bytes cannot be stored by PostgreSQL (text or jsonb), cannot name a file, and cannot go into
 * a header: every input that reaches one of them is refused up front with a 400 in the storage
 * error shape (the database error mapping is only the backstop).
 */
import { errors } from './errors.js';

/** True when any string in `value` (object keys included) holds U+0000. Iterative: any depth. */
export function hasNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return true;
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k.includes('\u0000')) return true;
        stack.push(x);
      }
    }
  }
  return false;
}

export function assertNoNul(value: unknown, what: string): void {
  if (hasNul(value)) throw errors.invalidRequest(`${what} must not contain NUL bytes`);
}

/**
 * `%00` in a request's query string (raw NUL bytes never get past the HTTP parser). In the path,
 * bucket names and keys are validated where they are read (InvalidKey / Bucket name invalid).
 */
export function queryHasNul(url: string): boolean {
  const q = url.indexOf('?');
  return q >= 0 && /%00/i.test(url.slice(q));
}
