/**
 * The common request answered without yoga's request pipeline: POST, `Content-Type:
 * application/json` (UTF-8), no `Origin` (so no CORS), an Accept that takes JSON, and a body that
 * is exactly `{query, variables?, operationName?, extensions?}` with the right types. It gets the
 * same authentication, limits, engine call and bytes as the yoga path; anything else (malformed
 * bodies, batches, other media types, browsers) returns undefined and goes through yoga, so every
 * error shape stays yoga's. Saves about half the HTTP layer's CPU per request.
 */
import type { CancelSignal } from '../../db/cancel-request.js';
import type { IncomingHttpHeaders } from 'node:http';
import {
  AuthError,
  HttpGraphQLError,
  JSON_CONTENT_TYPE,
  jsonErrorBody,
  principalOfRequest,
  runEngineRequest,
  type GraphQLRequestBody,
  type HttpAnswer,
} from './core.js';
import type { GraphQLTarget, RequestLimits } from './options.js';

const JSON_MEDIA = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const PARAMS = new Set(['query', 'variables', 'operationName', 'extensions']);

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function acceptsJson(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((part) => {
    const type = part.split(';', 1)[0].trim().toLowerCase();
    return type === 'application/json' || type === '*/*' || type === 'application/*';
  });
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A GET query (`?query=…[&variables=…][&operationName=…][&extensions=…]`, each at most once,
 * nothing else) that takes JSON and comes from no browser page (no `Origin`; an Accept without
 * `text/html`, which asks for GraphiQL): its parameters, else undefined (yoga answers it).
 * A mutation still reaches runEngineRequest, which refuses it over GET (405).
 */
export function directGetParams(
  method: string,
  url: string | undefined,
  headers: IncomingHttpHeaders,
): GraphQLRequestBody | undefined {
  if (method !== 'GET' || url === undefined || headers.origin !== undefined) return undefined;
  const accept = header(headers, 'accept');
  if (!acceptsJson(accept) || accept?.toLowerCase().includes('text/html')) return undefined;
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  let search: URLSearchParams;
  try {
    search = new URLSearchParams(url.slice(q + 1));
  } catch {
    return undefined;
  }
  const seen = new Set<string>();
  for (const k of search.keys()) {
    if (!PARAMS.has(k) || seen.has(k)) return undefined;
    seen.add(k);
  }
  const query = search.get('query');
  if (!query) return undefined;
  const object = (name: string): Record<string, unknown> | null | undefined => {
    const text = search.get(name);
    if (text === null || text === '') return null;
    try {
      const v: unknown = JSON.parse(text);
      return v === null ? null : isPlainObject(v) ? v : undefined;
    } catch {
      return undefined;
    }
  };
  const variables = object('variables');
  if (variables === undefined || object('extensions') === undefined) return undefined;
  const operationName = search.get('operationName');
  return { query, variables, operationName: operationName === '' ? null : operationName };
}

/** The request's GraphQL parameters when the direct path may serve it, else undefined. */
export function directParams(
  method: string,
  headers: IncomingHttpHeaders,
  body: Buffer | string | undefined,
): GraphQLRequestBody | undefined {
  if (method !== 'POST' || body === undefined || headers.origin !== undefined) return undefined;
  const contentType = header(headers, 'content-type');
  if (!contentType || !JSON_MEDIA.test(contentType.trim()) || !acceptsJson(header(headers, 'accept')))
    return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isPlainObject(parsed)) return undefined;
  for (const k of Object.keys(parsed)) if (!PARAMS.has(k) && parsed[k] != null) return undefined;
  const { query, variables, operationName, extensions } = parsed;
  if (typeof query !== 'string') return undefined;
  if (variables != null && !isPlainObject(variables)) return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  if (extensions != null && !isPlainObject(extensions)) return undefined;
  return {
    query,
    variables: (variables as Record<string, unknown> | null | undefined) ?? null,
    operationName: (operationName as string | null | undefined) ?? null,
  };
}

function json(status: number, text: string, headers: Record<string, string> = {}): HttpAnswer {
  return { status, headers: { 'content-type': JSON_CONTENT_TYPE, ...headers }, body: text };
}

export interface DirectPostOptions {
  limits: RequestLimits;
  onUnexpectedError: (err: unknown) => void;
  /** Notices of a newly loaded catalog (see runEngineRequest). */
  onCatalogNotices?: (notices: string[]) => void;
}

export async function answerDirect(
  params: GraphQLRequestBody,
  headers: IncomingHttpHeaders,
  resolveTarget: () => GraphQLTarget | undefined | Promise<GraphQLTarget | undefined>,
  opts: DirectPostOptions,
  method: 'GET' | 'POST' = 'POST',
  signal?: CancelSignal,
): Promise<HttpAnswer> {
  const target = await resolveTarget();
  if (!target) return json(404, jsonErrorBody('Project not found'));
  let principal: Awaited<ReturnType<typeof principalOfRequest>>;
  try {
    principal = await principalOfRequest(target, (name) => header(headers, name));
  } catch (err) {
    if (err instanceof AuthError) return json(401, jsonErrorBody(err.message));
    throw err;
  }
  try {
    return json(
      200,
      await runEngineRequest(
        { pool: target.pool, principal },
        params,
        method,
        opts.limits,
        signal,
        opts.onCatalogNotices,
      ),
    );
  } catch (err) {
    if (err instanceof HttpGraphQLError)
      return json(err.status, JSON.stringify({ errors: [{ message: err.message }] }), err.headers);
    // As yoga's masked errors: the details go to the log, not to the client.
    opts.onUnexpectedError(err);
    return json(500, JSON.stringify({ errors: [{ message: 'Unexpected error.' }] }));
  }
}
