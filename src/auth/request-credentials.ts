/** Where an HTTP request carries its credentials (header names are case-insensitive in Node). */
import type { IncomingHttpHeaders } from 'node:http';

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The `apikey` header. */
export function apiKeyOf(headers: IncomingHttpHeaders): string | undefined {
  return first(headers.apikey)?.trim() || undefined;
}

/** The token of `Authorization: Bearer <token>`; undefined when absent or not a bearer token. */
export function bearerOf(headers: IncomingHttpHeaders): string | undefined {
  const h = first(headers.authorization);
  if (!h) return undefined;
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}
