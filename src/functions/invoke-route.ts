/**
 * {project}/functions/v1/{slug}[/sub/path][?query]: checks the function (exists, status, JWT),
 * leases a worker and proxies the request to it, streaming both bodies (no buffering: SSE and
 * chunked responses pass through as they are written). Limits end in the platform's error shapes
 * (error-responses.ts); every invocation is logged (function-logs.ts).
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Platform } from '../platform/platform.js';
import { inertFunctionHead } from '../platform/inert-content.js';
import { bearerOf } from '../auth/request-credentials.js';
import { verifyJwt } from '../auth/jwt.js';
import { PATH_SLUG } from './function-input.js';
import type { FunctionCatalog } from './function-catalog.js';
import { CapacityError, WorkerEndedError, type Lease } from './runtime.js';
import type { WorkerEnd } from './worker.js';
import * as errors from './error-responses.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'] as const;
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'expect',
]);
const PREFIX = '/functions/v1';
/**
 * Header fields a request may bring: a worker's HTTP server (Deno) refuses more than 128 with a
 * bare 400, and the hop adds a few of its own (host, connection, content-length).
 */
const MAX_REQUEST_HEADERS = 100;

function sendError(res: ServerResponse, e: errors.PlatformError): void {
  const body = JSON.stringify(e.body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  };
  if (e.errorCode) headers['sb-error-code'] = e.errorCode;
  res.writeHead(e.status, headers);
  res.end(body);
}

function reject(reply: FastifyReply, e: errors.PlatformError): FastifyReply {
  if (e.errorCode) reply.header('sb-error-code', e.errorCode);
  return reply.code(e.status).type('application/json').send(JSON.stringify(e.body));
}

/** Errors Fastify answers before the route runs (an undecodable path): the platform's `{code, message}`. */
export function sendFunctionsFrameworkError(
  err: FastifyError,
  _req: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const status = err.statusCode ?? 400;
  return reject(reply, {
    status,
    body: { code: status === 400 ? 'BAD_REQUEST' : status, message: err.message },
  });
}

function forwardHeaders(h: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

function errorFor(why: WorkerEnd): errors.PlatformError {
  if (why === 'timeout') return errors.TIMEOUT;
  if (why === 'cpu' || why === 'memory' || why === 'disk') return errors.WORKER_LIMIT;
  if (why === 'boot') return errors.BOOT_ERROR;
  if (why === 'shutdown' || why === 'preempted') return errors.CAPACITY;
  return errors.WORKER_ERROR;
}

/** A host name (or IPv4) or a bracketed IPv6 address, and an optional port. */
const HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/;

/**
 * The Host the worker is sent (its `req.url` is built from it): the client's when well-formed,
 * `localhost` when absent or empty, undefined when malformed (`a b`, `x/y`, `x:99999`).
 */
function forwardedHost(host: string | undefined): string | undefined {
  if (!host) return 'localhost';
  const m = HOST.exec(host);
  if (!m || (m[1] !== undefined && Number(m[1]) > 65535)) return undefined;
  return host;
}

/** The function slug of an invocation URL (first segment after the prefix, decoded); undefined if malformed. */
function slugOf(url: string): string | undefined {
  const rest = url.slice(url.indexOf(PREFIX) + PREFIX.length + 1);
  const end = rest.search(/[/?#]/);
  try {
    return decodeURIComponent(end === -1 ? rest : rest.slice(0, end));
  } catch {
    return undefined;
  }
}

/** The URL a function reaches its own project's APIs at (the address this request came in on). */
function apiUrlOf(req: FastifyRequest, ref: string): string {
  const addr = req.socket.localAddress ?? '127.0.0.1';
  const host = addr.includes(':') ? (addr.startsWith('::ffff:') ? addr.slice(7) : `[${addr}]`) : addr;
  return `http://${host}:${req.socket.localPort}/project/${ref}`;
}

export const functionsInvokeRoutes: FastifyPluginAsync<{
  platform: Platform;
  catalog: FunctionCatalog;
}> = async (app, { catalog }) => {
  // Bodies stay unread streams: the proxy forwards them as they arrive.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
  const { runtime } = catalog;
  const limits = runtime.config;
  const logs = runtime.logs;

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const slug = slugOf(req.url);
    if (slug === undefined || slug.length > 128 || !PATH_SLUG.test(slug))
      return reject(reply, errors.INVALID_SLUG);
    const host = forwardedHost(req.headers.host);
    if (!host) return reject(reply, errors.INVALID_HOST);
    if (req.raw.rawHeaders.length / 2 > MAX_REQUEST_HEADERS) {
      reply.header('connection', 'close');
      return reject(reply, errors.TOO_MANY_HEADERS);
    }
    const ctx = req.project;
    if (!ctx) return reject(reply, errors.NOT_FOUND);
    const record = await catalog.record(ctx.ref, slug);
    if (!record || record.status === 'REMOVED') return reject(reply, errors.NOT_FOUND);
    if (record.status === 'THROTTLED') return reject(reply, errors.THROTTLED);
    // CORS preflights carry no Authorization header: they reach the function, which answers them.
    if (record.verifyJwt && req.method !== 'OPTIONS') {
      const token = bearerOf(req.headers);
      if (!token) return reject(reply, errors.MISSING_AUTH);
      try {
        await verifyJwt(ctx.jwtSecret, token);
      } catch {
        return reject(reply, errors.INVALID_JWT);
      }
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limits.bodyLimit) {
      reply.header('connection', 'close');
      return reject(reply, errors.TOO_LARGE);
    }
    const started = performance.now();
    const log = (status: number, errorCode?: string) =>
      logs.add(ctx.ref, {
        function_slug: slug,
        type: 'invocation',
        level: status >= 500 ? 'error' : 'info',
        message: `${req.method} ${req.url.slice(req.url.indexOf(PREFIX) + PREFIX.length)}`,
        status,
        duration_ms: Math.round(performance.now() - started),
        error_code: errorCode,
      });
    let lease: Lease;
    try {
      const spec = await catalog.spec(ctx, record, apiUrlOf(req, ctx.ref));
      lease = await runtime.lease(spec);
    } catch (err) {
      const e =
        err instanceof CapacityError
          ? errors.CAPACITY
          : err instanceof WorkerEndedError
            ? errorFor(err.why === 'crash' || err.why === 'memory' ? 'boot' : err.why)
            : errors.BOOT_ERROR;
      if (!(err instanceof CapacityError))
        logs.add(ctx.ref, {
          function_slug: slug,
          type: 'log',
          level: 'error',
          message: `boot error: ${err instanceof Error ? err.message : String(err)}`,
        });
      log(e.status, e.errorCode);
      return reject(reply, e);
    }
    reply.hijack();
    const note = (message: string) =>
      logs.add(ctx.ref, { function_slug: slug, type: 'log', level: 'error', message });
    proxy(req, reply.raw, lease, host, log, note);
  };

  function proxy(
    req: FastifyRequest,
    res: ServerResponse,
    lease: Lease,
    host: string,
    log: (status: number, errorCode?: string) => void,
    note: (message: string) => void,
  ): void {
    const { worker } = lease;
    const pool = worker.pool;
    let done = false;
    let abort: ((err?: Error) => void) | undefined;
    let aborted = false;
    const stopUpstream = () => {
      aborted = true;
      abort?.(new Error('aborted'));
    };
    const finish = (status: number, errorCode?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      lease.release();
      log(status, errorCode);
    };
    const fail = (e: errors.PlatformError) => {
      if (done) return;
      stopUpstream();
      if (!res.headersSent) sendError(res, e);
      else {
        // The answer has started, so it is cut off; its head may still be waiting for the first
        // body chunk (onHeaders' 20 ms): it leaves first, so the client sees the status it got.
        res.flushHeaders();
        setImmediate(() => res.destroy());
      }
      finish(e.status, e.errorCode);
    };
    // The worker went away: the limit's reason if it was killed, else (after it had time to exit) an error.
    const lost = () => setTimeout(() => fail(errorFor(worker.ended ?? 'crash')), worker.ended ? 0 : 200);
    // Wall clock. When it is the client that holds the request up (its body still trickling in, or
    // the answer not read), only this request ends; otherwise the function is not answering and
    // its worker is killed (so are the worker's other requests).
    let waitingOnClient = false;
    const timer = setTimeout(() => {
      if (waitingOnClient) {
        if (!res.headersSent) res.setHeader('connection', 'close');
        fail(errors.REQUEST_TIMEOUT);
      } else if (res.writableNeedDrain) fail(errors.TIMEOUT);
      else void worker.kill('timeout');
    }, limits.requestTimeoutMs);
    lease.ended.catch((why: WorkerEnd) => fail(errorFor(why)));
    // The client left while the function was looked up or its worker started: its 'close' has
    // fired already (the listener below would never run), so nothing is sent upstream.
    if (res.destroyed) {
      finish(499);
      return;
    }
    if (!pool) {
      lost();
      return;
    }

    // Request body: forwarded as it arrives, counted against the limit. A request that declares
    // no body (no content-length, no transfer-encoding) sends none, so nothing waits for its end.
    const raw = req.raw;
    const hasBody =
      req.headers['transfer-encoding'] !== undefined ||
      (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
    let body: Readable | null = null;
    if (hasBody) {
      body = Readable.from(
        (async function* () {
          let received = 0;
          const chunks = (raw as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
          for (;;) {
            waitingOnClient = true;
            const next = await chunks.next().finally(() => {
              waitingOnClient = false;
            });
            if (next.done) return;
            const chunk = next.value;
            received += chunk.length;
            if (received > limits.bodyLimit) {
              // (Once the function's answer has started, it is cut off instead.)
              if (!res.headersSent) res.setHeader('connection', 'close');
              fail(errors.TOO_LARGE);
              return;
            }
            yield chunk;
          }
        })(),
        { objectMode: false },
      );
    } else raw.resume();

    let status = 500;
    let errorCode: string | undefined;
    let early: NodeJS.Timeout | undefined;
    pool.dispatch(
      {
        method: req.method as Dispatcher.HttpMethod,
        path: req.url.slice(req.url.indexOf(PREFIX) + PREFIX.length),
        headers: { ...forwardHeaders(req.headers), host },
        body,
      },
      {
        onConnect(abortFn) {
          abort = abortFn;
          if (aborted || done) abortFn(new Error('aborted'));
        },
        onError(err) {
          clearTimeout(early);
          if (done) return;
          // Not our own abort, a client that left, nor a worker that ended: say what went wrong (e.g. headers too large).
          if (!aborted && !res.destroyed && worker.alive) note(`invocation failed: ${err.message}`);
          lost();
        },
        onHeaders(statusCode, rawHeaders, resume) {
          if (done) return false;
          status = statusCode;
          const headers: string[] = [];
          let eventStream = false;
          for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
            const name = rawHeaders[i]?.toString('latin1') ?? '';
            const lower = name.toLowerCase();
            if (HOP_BY_HOP.has(lower)) continue;
            const value = rawHeaders[i + 1]?.toString('latin1') ?? '';
            if (lower === 'content-type' && value.startsWith('text/event-stream')) eventStream = true;
            if (lower === 'sb-error-code') errorCode = value;
            headers.push(name, value);
          }
          res.writeHead(statusCode, inertFunctionHead(headers));
          res.on('drain', resume);
          // The head normally leaves with the first body chunk (one write). An event stream, or a
          // body whose first chunk is slow to come, gets its head sent on its own so the client sees it now.
          if (eventStream) res.flushHeaders();
          else
            early = setTimeout(() => {
              if (!res.writableEnded && !res.destroyed) res.flushHeaders();
            }, 20);
          return true;
        },
        onData(chunk) {
          clearTimeout(early);
          if (done) return false;
          return res.write(chunk);
        },
        onComplete() {
          clearTimeout(early);
          if (done) return;
          res.end();
          finish(status, status >= 500 ? errorCode : undefined);
        },
      },
    );
    res.on('close', () => {
      if (!done) {
        // The client went away: stop the upstream request too.
        stopUpstream();
        finish(res.writableFinished ? res.statusCode : 499);
      }
    });
  }

  // One wildcard route, the slug read from the URL here: a `:slug` parameter would be cut off at
  // the router's parameter length (100, answered 414) below the 128 characters a slug may have.
  app.route({ method: [...METHODS], url: `${PREFIX}/*`, handler });
  // The router's other methods (TRACE, …) get the platform's 405, not a route-not-found 404.
  const others = app.supportedMethods.filter((m) => !(METHODS as readonly string[]).includes(m));
  if (others.length)
    app.route({
      method: others,
      url: `${PREFIX}/*`,
      handler: (_req, reply) => reject(reply.header('allow', METHODS.join(', ')), errors.METHOD_NOT_ALLOWED),
    });
};
