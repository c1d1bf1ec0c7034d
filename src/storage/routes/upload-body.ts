/**
 * The content of an upload request : a raw body streamed as is, or the first file
 * part of a multipart form (fields before it: cacheControl, contentType, metadata/userMetadata).
 */
import { wellFormedReviver } from '../../db/well-formed.js';
import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/multipart';
import { errors } from '../errors.js';
import { assertNoNul } from '../nul.js';
import type { UploadBody } from '../service/uploads.js';

const MAX_USER_METADATA = 1024 * 1024;

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function isMultipart(req: FastifyRequest): boolean {
  return /^multipart\/form-data/i.test(header(req, 'content-type') ?? '');
}

/** A JSON object (user metadata), unpaired surrogates made U+FFFD; undefined for anything else. */
export function parseJsonObject(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(text, wellFormedReviver);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function robotsTagOf(req: FastifyRequest): string | undefined {
  const v = header(req, 'x-robots-tag');
  if (v === undefined) return undefined;
  if (!/^[A-Za-z0-9 ,:_-]+$/.test(v)) throw errors.invalidRobotsTag('unexpected characters');
  return v;
}

/** Validates the Content-Type header's syntax (type/subtype with optional parameters). */
function contentTypeOf(req: FastifyRequest): string {
  const v = header(req, 'content-type');
  if (v === undefined || v.trim() === '') return 'application/octet-stream';
  if (!/^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;.*)?$/.test(v.trim()))
    throw errors.invalidContentType();
  return v.trim();
}

/** `limit` sizes the multipart file part (the byte count itself is enforced while streaming). */
export async function readUploadBody(req: FastifyRequest, limit: number): Promise<UploadBody> {
  const xRobotsTag = robotsTagOf(req);
  if (!isMultipart(req)) {
    const contentType = contentTypeOf(req);
    const len = header(req, 'content-length');
    const declaredLength = len !== undefined && /^\d+$/.test(len) ? Number(len) : undefined;
    if (declaredLength !== undefined && declaredLength > limit) throw errors.entityTooLarge();
    const meta = header(req, 'x-metadata');
    let userMetadata: Record<string, unknown> = {};
    if (meta !== undefined) {
      if (meta.length > (MAX_USER_METADATA * 4) / 3 + 4) throw errors.metadataTooLarge();
      userMetadata = parseJsonObject(Buffer.from(meta, 'base64').toString('utf8')) ?? {};
    }
    assertNoNul(userMetadata, 'metadata');
    return {
      stream: req.raw,
      contentType,
      cacheControl: header(req, 'cache-control') ?? 'no-cache',
      userMetadata,
      declaredLength,
      xRobotsTag,
    };
  }
  const part = await req.file({
    limits: { files: 1, fields: 10, fieldSize: MAX_USER_METADATA + 1, fileSize: limit + 1 },
    throwFileSizeLimit: false,
  });
  if (!part) throw errors.noContent();
  const field = (name: string): string | undefined => {
    const f = part.fields[name];
    const one = Array.isArray(f) ? f[0] : f;
    return one && one.type === 'field' && typeof one.value === 'string' ? one.value : undefined;
  };
  const metaText = field('metadata') ?? field('userMetadata');
  if (metaText !== undefined && Buffer.byteLength(metaText) > MAX_USER_METADATA)
    throw errors.metadataTooLarge();
  const cache = field('cacheControl');
  const contentType = field('contentType');
  assertNoNul([metaText, cache, contentType, part.filename], 'form field');
  return {
    stream: part.file,
    contentType: contentType ?? (part.mimetype || 'application/octet-stream'),
    cacheControl: cache !== undefined ? `max-age=${cache}` : 'no-cache',
    userMetadata: parseJsonObject(metaText) ?? {},
    xRobotsTag,
  };
}
