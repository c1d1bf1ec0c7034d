/**
 * Node requests in, answers out. The body is read here (with the size limit) before the core sees
 * the request, which keeps yoga's streaming body limiter off the hot path and gives 413 answers the
 * same JSON shape as the other HTTP errors; bodies an Express parser already read are used as they are
 * (the limit applies to them too).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { JSON_CONTENT_TYPE, jsonErrorBody } from './json-errors.js';
import { BadContentLengthError, BodyTooLargeError, readBody } from './node-body.js';
import type { StrataYoga } from './yoga-server.js';
import type { HttpAnswer } from './direct-post.js';

const BODYLESS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function searchOf(url: string | undefined): string {
  const u = url ?? '';
  const q = u.indexOf('?');
  return q >= 0 ? u.slice(q) : '';
}

/** A body another middleware already read (Express body parsers), as request bytes; undefined when none. */
export function preReadBody(req: IncomingMessage & { body?: unknown }): Buffer | string | undefined {
  const b = req.body;
  if (b === undefined || b === null) return undefined;
  if (Buffer.isBuffer(b) || typeof b === 'string') return b;
  if (typeof b === 'object' && Object.keys(b).length === 0 && !req.readableEnded) return undefined;
  return JSON.stringify(b);
}

export function fetchRequest(
  yoga: StrataYoga,
  endpoint: string,
  method: string,
  url: string | undefined,
  headers: IncomingHttpHeaders,
  body: Buffer | string | undefined,
): Request {
  const init: RequestInit = { method, headers: headers as Record<string, string> };
  if (!BODYLESS.has(method) && body !== undefined) init.body = body as unknown as BodyInit;
  return new yoga.fetchAPI.Request(`http://localhost${endpoint}${searchOf(url)}`, init);
}

/** The body of a request, or the error response to send instead (413, 400). */
export async function bodyOrError(
  req: IncomingMessage & { body?: unknown },
  limit: number,
): Promise<{ body?: Buffer | string; error?: { status: number; message: string } }> {
  const method = req.method ?? 'GET';
  if (BODYLESS.has(method)) return {};
  const pre = preReadBody(req);
  if (pre !== undefined) {
    if (Buffer.byteLength(pre) > limit)
      return { error: { status: 413, message: new BodyTooLargeError(limit).message } };
    return { body: pre };
  }
  try {
    return { body: await readBody(req, limit) };
  } catch (err) {
    if (err instanceof BodyTooLargeError) return { error: { status: 413, message: err.message } };
    if (err instanceof BadContentLengthError) return { error: { status: 400, message: err.message } };
    throw err;
  }
}

export function sendJsonError(res: ServerResponse, status: number, message: string): void {
  const text = jsonErrorBody(message);
  res.writeHead(status, {
    'content-type': JSON_CONTENT_TYPE,
    'content-length': Buffer.byteLength(text),
    ...(status === 413 ? { connection: 'close' } : {}),
  });
  res.end(text);
}

export function sendAnswer(res: ServerResponse, answer: HttpAnswer): void {
  const headers = { ...answer.headers };
  if (answer.body !== undefined) headers['content-length'] = String(Buffer.byteLength(answer.body));
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}
