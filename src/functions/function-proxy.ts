/**
 * One invocation's trip to its leased worker and back (invoke-route.ts starts it): the request and
 * its body forwarded as they arrive, the answer streamed back (no buffering: SSE and chunked
 * responses pass through as they are written), the limits (wall clock, body size, the worker's
 * end) answered in the platform's error shapes, and the invocation logged once. One object per
 * invocation holds the state and is the undici dispatch handler itself: the hot path of a warm
 * call allocates no closure per callback.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { FunctionsConfig } from '../config.js';
import { inertFunctionHead } from '../platform/inert-content.js';
import type { FunctionLogs } from './function-logs.js';
import type { HeadFlusher } from './head-flusher.js';
import type { Lease } from './runtime.js';
import type { WorkerEnd } from './worker.js';
import * as errors from './error-responses.js';

/** Headers of one connection (or of this hop), never forwarded either way. */
export const HOP_BY_HOP = new Set([
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

export function sendError(res: ServerResponse, e: errors.PlatformError): void {
  const body = JSON.stringify(e.body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  };
  if (e.errorCode) headers['sb-error-code'] = e.errorCode;
  res.writeHead(e.status, headers);
  res.end(body);
}

export function errorFor(why: WorkerEnd): errors.PlatformError {
  if (why === 'timeout') return errors.TIMEOUT;
  if (why === 'cpu' || why === 'memory' || why === 'disk') return errors.WORKER_LIMIT;
  if (why === 'boot') return errors.BOOT_ERROR;
  if (why === 'shutdown' || why === 'preempted') return errors.CAPACITY;
  return errors.WORKER_ERROR;
}

/** What an invocation is logged as (function_logs: type `invocation`). */
export interface InvocationLog {
  logs: FunctionLogs;
  ref: string;
  slug: string;
  /** "METHOD /path" */
  message: string;
  /** performance.now() when the invocation was admitted. */
  started: number;
}

export function logInvocation(l: InvocationLog, status: number, errorCode?: string): void {
  l.logs.add(l.ref, {
    function_slug: l.slug,
    type: 'invocation',
    level: status >= 500 ? 'error' : 'info',
    message: l.message,
    status,
    duration_ms: Math.round(performance.now() - l.started),
    error_code: errorCode,
  });
}

/**
 * The request's headers for the worker, as undici's flat [name, value, ...] list: the client's,
 * less the hop-by-hop ones, and `host`. One array, no intermediate object.
 */
function forwardHeaders(req: IncomingMessage, host: string): string[] {
  const out: string[] = [];
  const h = req.headers;
  for (const k in h) {
    const v = h[k];
    if (v === undefined || HOP_BY_HOP.has(k)) continue;
    if (typeof v === 'string') out.push(k, v);
    else for (const item of v) out.push(k, item);
  }
  out.push('host', host);
  return out;
}

export class FunctionProxy implements Dispatcher.DispatchHandlers {
  private done = false;
  private abortFn?: (err?: Error) => void;
  private aborted = false;
  /** True while the request body is awaited from the client (see the wall-clock timer). */
  private waitingOnClient = false;
  private status = 500;
  private errorCode?: string;
  /** The head is written and waits for the first body chunk (see HeadFlusher). */
  private headWaiting = false;
  private timer?: NodeJS.Timeout;
  private resumeFn?: () => void;
  private drainHooked = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly lease: Lease,
    private readonly log: InvocationLog,
    private readonly limits: Pick<FunctionsConfig, 'requestTimeoutMs' | 'bodyLimit'>,
    /** An error line in the function's logs (type `log`). */
    private readonly note: (message: string) => void,
    private readonly heads: HeadFlusher,
  ) {}

  /** The first body chunk (or the end) came, or the answer is over. */
  private headSent(): void {
    if (!this.headWaiting) return;
    this.headWaiting = false;
    this.heads.done(this.res);
  }

  /** Sends the request upstream; `path` is the function's own (after /functions/v1). */
  start(path: string, host: string): void {
    const { res, req, lease, limits } = this;
    const worker = lease.worker;
    // Wall clock. When it is the client that holds the request up (its body still trickling in, or
    // the answer not read), only this request ends; otherwise the function is not answering and
    // its worker is killed (so are the worker's other requests).
    this.timer = setTimeout(() => this.onWallClock(), limits.requestTimeoutMs);
    lease.onEnd((why) => this.fail(errorFor(why)));
    // The client left while the function was looked up or its worker started: its 'close' has
    // fired already (the listener below would never run), so nothing is sent upstream.
    if (res.destroyed) {
      this.finish(499);
      return;
    }
    const pool = worker.pool;
    if (!pool) {
      this.lost();
      return;
    }
    // Request body: forwarded as it arrives, counted against the limit. A request that declares
    // no body (no content-length, no transfer-encoding) sends none, so nothing waits for its end.
    const hasBody =
      req.headers['transfer-encoding'] !== undefined ||
      (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
    let body: Readable | null = null;
    if (hasBody) body = Readable.from(this.bodyChunks(), { objectMode: false });
    else req.resume();
    pool.dispatch(
      {
        method: req.method as Dispatcher.HttpMethod,
        path,
        headers: forwardHeaders(req, host),
        body,
      },
      this,
    );
    res.on('close', () => {
      if (!this.done) {
        // The client went away: stop the upstream request too.
        this.stopUpstream();
        this.finish(res.writableFinished ? res.statusCode : 499);
      }
    });
  }

  private async *bodyChunks(): AsyncGenerator<Buffer> {
    const { res, limits } = this;
    let received = 0;
    const chunks = (this.req as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    for (;;) {
      this.waitingOnClient = true;
      const next = await chunks.next().finally(() => {
        this.waitingOnClient = false;
      });
      if (next.done) return;
      const chunk = next.value;
      received += chunk.length;
      if (received > limits.bodyLimit) {
        // (Once the function's answer has started, it is cut off instead.)
        if (!res.headersSent) res.setHeader('connection', 'close');
        this.fail(errors.TOO_LARGE);
        return;
      }
      yield chunk;
    }
  }

  private onWallClock(): void {
    const res = this.res;
    if (this.waitingOnClient) {
      if (!res.headersSent) res.setHeader('connection', 'close');
      this.fail(errors.REQUEST_TIMEOUT);
    } else if (res.writableNeedDrain) this.fail(errors.TIMEOUT);
    else void this.lease.worker.kill('timeout');
  }

  private stopUpstream(): void {
    this.aborted = true;
    this.abortFn?.(new Error('aborted'));
  }

  private finish(status: number, errorCode?: string): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.headSent();
    this.lease.release();
    logInvocation(this.log, status, errorCode);
  }

  private fail(e: errors.PlatformError): void {
    if (this.done) return;
    const res = this.res;
    this.stopUpstream();
    if (!res.headersSent) sendError(res, e);
    else {
      // The answer has started, so it is cut off; its head may still be waiting for the first
      // body chunk (HeadFlusher): it leaves first, so the client sees the status it got.
      res.flushHeaders();
      setImmediate(() => res.destroy());
    }
    this.finish(e.status, e.errorCode);
  }

  /** The worker went away: the limit's reason if it was killed, else (after it had time to exit) an error. */
  private lost(): void {
    const worker = this.lease.worker;
    setTimeout(() => this.fail(errorFor(worker.ended ?? 'crash')), worker.ended ? 0 : 200);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortFn = abort;
    if (this.aborted || this.done) abort(new Error('aborted'));
  }

  onError(err: Error): void {
    this.headSent();
    if (this.done) return;
    // Not our own abort, a client that left, nor a worker that ended: say what went wrong (e.g. headers too large).
    if (!this.aborted && !this.res.destroyed && this.lease.worker.alive)
      this.note(`invocation failed: ${err.message}`);
    this.lost();
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (this.done) return false;
    const res = this.res;
    this.status = statusCode;
    this.resumeFn = resume;
    const headers: string[] = [];
    let eventStream = false;
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]?.toString('latin1') ?? '';
      const lower = name.toLowerCase();
      if (HOP_BY_HOP.has(lower)) continue;
      const value = rawHeaders[i + 1]?.toString('latin1') ?? '';
      if (lower === 'content-type' && value.startsWith('text/event-stream')) eventStream = true;
      if (lower === 'sb-error-code') this.errorCode = value;
      headers.push(name, value);
    }
    res.writeHead(statusCode, inertFunctionHead(headers));
    // The head normally leaves with the first body chunk (one write). An event stream, or a
    // body whose first chunk is slow to come, gets its head sent on its own so the client sees it now.
    if (eventStream) res.flushHeaders();
    else {
      this.headWaiting = true;
      this.heads.wait(res);
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.headSent();
    if (this.done) return false;
    const ok = this.res.write(chunk);
    // Backpressure: undici pauses on false and waits for `resume`, called on the socket's drain
    // (the listener is added the first time the client is behind, not on every invocation).
    if (!ok && !this.drainHooked && this.resumeFn) {
      this.drainHooked = true;
      this.res.on('drain', this.resumeFn);
    }
    return ok;
  }

  onComplete(): void {
    this.headSent();
    if (this.done) return;
    this.res.end();
    this.finish(this.status, this.status >= 500 ? this.errorCode : undefined);
  }
}
