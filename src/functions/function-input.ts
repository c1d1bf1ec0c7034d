/**
 * Reading a function create/update request: the JSON body (V1CreateFunctionBody /
 * V1UpdateFunctionBody; also JSON sent as text/plain or without a content type, as
 * supabase-management-js v2 does), an eszip bundle (application/vnd.denoland.eszip) or any other
 * raw body (stored as given), plus the query parameters (slug, name, verify_jwt, import_map,
 * entrypoint_path, import_map_path, ezbr_sha256).
 */
import { createHash } from 'node:crypto';
import type { FunctionBody, FunctionFields } from './function-store.js';

export class FunctionInputError extends Error {}

export const ESZIP = 'application/vnd.denoland.eszip';
/** How a function's source text from a JSON body is stored and served. */
export const SOURCE_CONTENT_TYPE = 'application/typescript; charset=utf-8';

/** Slug in a path or the `slug` query parameter. */
export const PATH_SLUG = /^[A-Za-z0-9_-]+$/;
/** Slug in a JSON create body: must start with a letter. */
export const BODY_SLUG = /^[A-Za-z][A-Za-z0-9_-]*$/;
const MAX_SLUG = 128;

export interface ParsedUpload {
  fields: FunctionFields;
  body?: FunctionBody;
}

function sha256(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

function bool(name: string, v: unknown): boolean | undefined {
  if (v === undefined) return undefined;
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw new FunctionInputError(`${name} must be true or false`);
}

function str(name: string, v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new FunctionInputError(`${name} must be a string`);
  // The functions routes parse their own bodies, so the Management API's NUL check
  // (management/http/nul-bytes.ts) is repeated here.
  if (v.includes('\u0000'))
    throw new FunctionInputError(`${name} must not contain the NUL character (\\u0000)`);
  return v;
}

function slugOf(name: string, v: unknown, pattern: RegExp): string | undefined {
  const s = str(name, v);
  if (s === undefined) return undefined;
  if (s.length > MAX_SLUG || !pattern.test(s))
    throw new FunctionInputError(`Invalid function slug: ${name} must match ${pattern.source}`);
  return s;
}

function fieldsFromQuery(q: Record<string, unknown>): FunctionFields {
  const ezbr = str('ezbr_sha256', q.ezbr_sha256);
  if (ezbr !== undefined && !/^[0-9a-fA-F]{64}$/.test(ezbr))
    throw new FunctionInputError('ezbr_sha256 must be a hex SHA-256');
  return {
    slug: slugOf('slug', q.slug, PATH_SLUG),
    name: str('name', q.name),
    verifyJwt: bool('verify_jwt', q.verify_jwt),
    importMap: bool('import_map', q.import_map),
    entrypointPath: str('entrypoint_path', q.entrypoint_path),
    importMapPath: str('import_map_path', q.import_map_path),
    ezbrSha256: ezbr?.toLowerCase(),
  };
}

function baseType(contentType: string | undefined): string {
  return ((contentType ?? '').split(';', 1)[0] ?? '').trim().toLowerCase();
}

/** JSON body if the request is JSON, or text/plain / untyped text that parses as a JSON object. */
function jsonObject(type: string, raw: Buffer): Record<string, unknown> | undefined {
  const isJsonType = type === 'application/json' || type.endsWith('+json');
  if (!isJsonType && type !== 'text/plain' && type !== '') return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw.toString('utf8'));
  } catch {
    if (isJsonType) throw new FunctionInputError('Request body is not valid JSON');
    return undefined;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    if (isJsonType) throw new FunctionInputError('Request body must be a JSON object');
    return undefined;
  }
  return v as Record<string, unknown>;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Parses an upload; `mode` decides which JSON slug rule applies (the create body's is stricter). */
export function parseUpload(
  contentType: string | undefined,
  raw: Buffer | undefined,
  query: Record<string, unknown>,
  mode: 'create' | 'update',
): ParsedUpload {
  const fromQuery = fieldsFromQuery(query);
  const type = baseType(contentType);
  const bytes = raw ?? Buffer.alloc(0);
  const json = type === ESZIP ? undefined : jsonObject(type, bytes);
  if (json) {
    const fromJson: FunctionFields = {
      slug: mode === 'create' ? slugOf('slug', json.slug, BODY_SLUG) : undefined,
      name: str('name', json.name),
      verifyJwt: bool('verify_jwt', json.verify_jwt),
    };
    const source = str('body', json.body);
    const body =
      source === undefined
        ? undefined
        : (() => {
            const b = Buffer.from(source, 'utf8');
            return { bytes: b, contentType: SOURCE_CONTENT_TYPE, sha256: sha256(b) };
          })();
    return { fields: { ...fromQuery, ...definedOnly(fromJson) }, body };
  }
  if (bytes.length === 0) return { fields: fromQuery };
  const sha = sha256(bytes);
  const body: FunctionBody = {
    bytes,
    contentType: type === '' ? 'application/octet-stream' : (contentType ?? type),
    sha256: sha,
  };
  // The CLI sends ezbr_sha256 = SHA-256 of the uploaded bundle; compute it when absent.
  const fields =
    type === ESZIP && fromQuery.ezbrSha256 === undefined ? { ...fromQuery, ezbrSha256: sha } : fromQuery;
  return { fields, body };
}
