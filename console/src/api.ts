/**
 * The public APIs the console uses: Management (`/v1`, the signed-in access token), and a
 * project's Storage and GraphQL (`/project/<ref>/…`, its API keys). Errors carry the API's message.
 * They are on the API origin, not the console's own (docs/security/origins.md): the server names
 * it in `<meta name="strata-api-origin">`, and the page's CSP lets it connect there only.
 */
import { storedToken } from './session';

const named = document.querySelector<HTMLMetaElement>('meta[name="strata-api-origin"]')?.content ?? '';
export const API_ORIGIN = /^https?:\/\//.test(named) ? named : location.origin;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function messageOf(body: unknown, status: number): string {
  if (body && typeof body === 'object') {
    const b = body as { message?: unknown; error?: unknown; msg?: unknown };
    for (const m of [b.message, b.msg, b.error]) if (typeof m === 'string' && m) return m;
  }
  return `HTTP ${status}`;
}

async function call<T>(url: string, init: RequestInit): Promise<T> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  if (!res.ok) throw new ApiError(res.status, messageOf(body, res.status));
  return body as T;
}

function jsonInit(method: string, headers: Record<string, string>, body?: unknown): RequestInit {
  return {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
}

/** Management API call as the signed-in user. */
export function management<T>(method: string, path: string, body?: unknown): Promise<T> {
  return call<T>(
    `${API_ORIGIN}/v1${path}`,
    jsonInit(method, { authorization: `Bearer ${storedToken() ?? ''}` }, body),
  );
}

export const projectBase = (ref: string): string => `${API_ORIGIN}/project/${ref}`;

export interface ApiKeys {
  anon: string;
  serviceRole: string;
}

export function storageHeaders(keys: ApiKeys): Record<string, string> {
  return { apikey: keys.serviceRole, authorization: `Bearer ${keys.serviceRole}` };
}

/** Storage API call as the project's service role (the console holds it only when it may read keys). */
export function storage<T>(
  ref: string,
  keys: ApiKeys,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  return call<T>(`${projectBase(ref)}/storage/v1${path}`, jsonInit(method, storageHeaders(keys), body));
}

/** A storage object's path, each segment URL-encoded. */
export function objectPath(bucket: string, name: string): string {
  return [bucket, ...name.split('/')].map(encodeURIComponent).join('/');
}

/** SQL as the project owner through the Management API; rows as objects. */
export function runSql(ref: string, query: string, readOnly = false): Promise<Record<string, unknown>[]> {
  return management('POST', `/projects/${ref}/database/query${readOnly ? '/read-only' : ''}`, { query });
}

/** SQL with bound values ($1, $2, …) through database/query; the values travel as `parameters`. */
export function runSqlWith(
  ref: string,
  query: string,
  parameters: unknown[],
  readOnly = false,
): Promise<Record<string, unknown>[]> {
  return management('POST', `/projects/${ref}/database/query${readOnly ? '/read-only' : ''}`, {
    query,
    parameters,
  });
}

export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;
export const quoteLiteral = (v: string): string => `'${v.replace(/'/g, "''")}'`;

/** A Management API call whose answer is not JSON (a form, bytes), as the signed-in user. */
export async function managementRaw(method: string, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${storedToken() ?? ''}`);
  const res = await fetch(`${API_ORIGIN}/v1${path}`, { ...init, method, headers });
  if (!res.ok) {
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    throw new ApiError(res.status, messageOf(body, res.status));
  }
  return res;
}
