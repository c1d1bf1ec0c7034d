/**
 * Download and HEAD replies (§1.8): headers from the row's system metadata, conditional requests
 * answered without touching the backend, one byte range at most (byte-range.ts), bytes streamed
 * from the backend.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { FileBody } from '../backend/file-body.js';
import type { StorageBackend } from '../backend/interface.js';
import { decideRange, ifRangeHolds, type ByteSpan } from '../byte-range.js';
import { errors } from '../errors.js';
import { INERT_OBJECT_HEADERS } from '../../platform/inert-content.js';
import type { ObjectRow, SystemMetadata } from '../database/index.js';

export interface RenderOptions {
  /** Signed downloads send Expires instead of Cache-Control. */
  expires?: number;
  /**
   * Reads the row again when its bytes are gone: an overwrite that committed between our read and
   * the backend open removes the old version, and the new one should be served instead.
   */
  reload?: () => Promise<ObjectRow>;
  /** Headers that replace the object's own (S3 GetObject's `response-*` parameters). */
  overrides?: Record<string, string>;
}

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function dispositionOf(req: FastifyRequest): string | undefined {
  const q = req.query as Record<string, unknown>;
  if (!q || !('download' in q)) return undefined;
  const v = typeof q.download === 'string' ? q.download : '';
  if (v === '') return 'attachment;';
  const e = encodeURIComponent(v);
  return `attachment; filename=${e}; filename*=UTF-8''${e}`;
}

function setCommonHeaders(
  req: FastifyRequest,
  reply: FastifyReply,
  m: SystemMetadata,
  opts: RenderOptions,
): void {
  const type = m.mimetype ?? 'application/octet-stream';
  // As upstream, HTML is sent as text/plain (in any casing here); every object is inert besides.
  reply.header('content-type', /text\/html/i.test(type) ? 'text/plain' : type);
  reply.headers(INERT_OBJECT_HEADERS);
  reply.header('accept-ranges', 'bytes');
  if (m.eTag) reply.header('etag', m.eTag);
  if (m.lastModified) reply.header('last-modified', new Date(m.lastModified).toUTCString());
  reply.header('x-robots-tag', m.xRobotsTag ?? 'none');
  if (opts.expires !== undefined) reply.header('expires', new Date(opts.expires * 1000).toUTCString());
  else if (m.cacheControl) reply.header('cache-control', m.cacheControl);
  const disposition = dispositionOf(req);
  if (disposition) reply.header('content-disposition', disposition);
  for (const [name, value] of Object.entries(opts.overrides ?? {})) reply.header(name, value);
}

function notModified(req: FastifyRequest, m: SystemMetadata): boolean {
  const inm = one(req.headers['if-none-match']);
  if (inm !== undefined) return inm === m.eTag;
  const ims = one(req.headers['if-modified-since']);
  if (ims !== undefined && m.lastModified) {
    const since = Date.parse(ims);
    const last = Math.floor(Date.parse(m.lastModified) / 1000) * 1000;
    return Number.isFinite(since) && since >= last;
  }
  return false;
}

export async function renderObject(
  req: FastifyRequest,
  reply: FastifyReply,
  backend: StorageBackend,
  row: ObjectRow,
  opts: RenderOptions = {},
): Promise<FastifyReply> {
  const m = row.metadata;
  if (!m || !row.version) {
    reply.header('cache-control', 'no-store');
    throw errors.missingBytes();
  }
  const head = req.method === 'HEAD';
  setCommonHeaders(req, reply, m, opts);
  if (
    head &&
    one(req.headers['if-none-match']) !== undefined &&
    one(req.headers['if-none-match']) !== m.eTag &&
    m.cacheControl &&
    opts.expires === undefined
  ) {
    reply.header('cache-control', `${m.cacheControl}, must-revalidate`);
  }
  if (notModified(req, m)) return reply.code(304).send();
  const size = Number(m.size ?? m.contentLength ?? 0);
  let range: ByteSpan | undefined;
  const rangeHeader = one(req.headers.range);
  // HEAD answers as GET would, without the body (RFC 9110 §9.3.2): a range is 206 with its
  // Content-Range and length, an unsatisfiable one 416, as S3 HeadObject does.
  if (rangeHeader !== undefined && ifRangeHolds(one(req.headers['if-range']), m.eTag, m.lastModified)) {
    const decision = decideRange(rangeHeader, size);
    if (decision.kind === 'unsatisfiable') throw errors.invalidRange(size);
    if (decision.kind === 'partial') range = decision.span;
  }
  if (head) {
    if (range) {
      reply.header('content-range', `bytes ${range.start}-${range.end}/${size}`);
      reply.header('content-length', String(range.end - range.start + 1));
      return reply.code(206).send();
    }
    reply.header('content-length', String(size));
    return reply.code(200).send();
  }
  const stream = await backend.get({ bucket: row.bucket_id, key: row.name, version: row.version }, range);
  if (!stream && opts.reload) {
    const fresh = await opts.reload();
    if (fresh.version !== row.version)
      return renderObject(req, reply, backend, fresh, { ...opts, reload: undefined });
  }
  if (!stream) {
    reply.removeHeader('etag');
    reply.header('cache-control', 'no-store');
    throw errors.missingBytes();
  }
  if (range) {
    reply.code(206);
    reply.header('content-range', `bytes ${range.start}-${range.end}/${size}`);
    reply.header('content-length', String(range.end - range.start + 1));
  } else {
    reply.code(200);
    reply.header('content-length', String(size));
  }
  if (stream instanceof FileBody && stream.unread) {
    // Written by the file itself through reused buffers (file-body.ts); the head is the one set here.
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) reply.raw.setHeader(name, typeof value === 'number' ? String(value) : value);
    reply.raw.writeHead(reply.statusCode);
    await stream.sendTo(reply.raw);
    return reply;
  }
  return reply.send(stream);
}
