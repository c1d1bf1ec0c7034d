/**
 * {project}/functions/v1/{slug}[/sub/path][?query]: checks the function (exists, status, JWT),
 * leases a worker and proxies the request to it, streaming both bodies (no buffering: SSE and
 * chunked responses pass through as they are written). Limits end in the platform's error shapes
 * (error-responses.ts); every invocation is logged (function-logs.ts).
 */
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Platform } from '../platform/platform.js';
import { bearerOf } from '../auth/request-credentials.js';
import { verifiedRecently, verifyJwt } from '../auth/jwt.js';
import { PATH_SLUG } from './function-input.js';
import type { FunctionCatalog } from './function-catalog.js';
import type { FunctionRecord } from './function-store.js';
import type { ProjectContext } from '../platform/project-context.js';
import { CapacityError, WorkerEndedError, type Lease } from './runtime.js';
import { errorFor, FunctionProxy, type InvocationLog, logInvocation } from './function-proxy.js';
import { HeadFlusher } from './head-flusher.js';
import * as errors from './error-responses.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'] as const;
const PREFIX = '/functions/v1';
/**
 * Header fields a request may bring: a worker's HTTP server (Deno) refuses more than 128 with a
 * bare 400, and the hop adds a few of its own (host, connection, content-length).
 */
const MAX_REQUEST_HEADERS = 100;

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

/** One invocation while it is admitted (the handler's steps pass it on). */
interface Call {
  req: FastifyRequest;
  reply: FastifyReply;
  ctx: ProjectContext;
  slug: string;
  host: string;
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
  const heads = new HeadFlusher();
  app.addHook('onClose', async () => heads.close());

  // The handler runs synchronously as far as what it needs is known (a warm call: the function's
  // record and worker spec cached, its JWT verified recently, its worker ready) and goes on in a
  // promise only where it has to wait: no promise, async frame or microtask turn per warm call.
  // Every path ends in an answer (reject) or a hijacked reply, before a returned promise settles.
  const handler = (req: FastifyRequest, reply: FastifyReply): Promise<void> | undefined => {
    const slug = slugOf(req.url);
    if (slug === undefined || slug.length > 128 || !PATH_SLUG.test(slug))
      return void reject(reply, errors.INVALID_SLUG);
    const host = forwardedHost(req.headers.host);
    if (!host) return void reject(reply, errors.INVALID_HOST);
    if (req.raw.rawHeaders.length / 2 > MAX_REQUEST_HEADERS) {
      reply.header('connection', 'close');
      return void reject(reply, errors.TOO_MANY_HEADERS);
    }
    const ctx = req.project;
    if (!ctx) return void reject(reply, errors.NOT_FOUND);
    const call: Call = { req, reply, ctx, slug, host };
    const record = catalog.cachedRecord(ctx.ref, slug);
    if (record) return withRecord(call, record);
    return catalog.record(ctx.ref, slug).then((r) => withRecord(call, r));
  };

  function withRecord(call: Call, record: FunctionRecord | undefined): Promise<void> | undefined {
    const { req, reply, ctx } = call;
    if (!record || record.status === 'REMOVED') return void reject(reply, errors.NOT_FOUND);
    if (record.status === 'THROTTLED') return void reject(reply, errors.THROTTLED);
    // CORS preflights carry no Authorization header: they reach the function, which answers them.
    if (record.verifyJwt && req.method !== 'OPTIONS') {
      const token = bearerOf(req.headers);
      if (!token) return void reject(reply, errors.MISSING_AUTH);
      if (!verifiedRecently(ctx.jwtSecret, token))
        return verifyJwt(ctx.jwtSecret, token).then(
          () => admit(call, record),
          () => void reject(reply, errors.INVALID_JWT),
        );
    }
    return admit(call, record);
  }

  function admit(call: Call, record: FunctionRecord): Promise<void> | undefined {
    const { req, reply, ctx, slug } = call;
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limits.bodyLimit) {
      reply.header('connection', 'close');
      return void reject(reply, errors.TOO_LARGE);
    }
    const path = req.url.slice(req.url.indexOf(PREFIX) + PREFIX.length);
    const log: InvocationLog = {
      logs,
      ref: ctx.ref,
      slug,
      message: `${req.method} ${path}`,
      started: performance.now(),
    };
    const failed = (err: unknown) => leaseFailed(call, log, err);
    let lease: Lease | Promise<Lease>;
    try {
      const apiUrl = apiUrlOf(req, ctx.ref);
      const spec = catalog.specNow(ctx, record, apiUrl);
      lease = spec ? runtime.lease(spec) : catalog.spec(ctx, record, apiUrl).then((s) => runtime.lease(s));
    } catch (err) {
      failed(err);
      return undefined;
    }
    if (lease instanceof Promise) return lease.then((l) => proxy(call, log, path, l), failed);
    proxy(call, log, path, lease);
    return undefined;
  }

  function leaseFailed({ reply, ctx, slug }: Call, log: InvocationLog, err: unknown): void {
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
    logInvocation(log, e.status, e.errorCode);
    reject(reply, e);
  }

  function proxy(
    { req, reply, ctx, slug, host }: Call,
    log: InvocationLog,
    path: string,
    lease: Lease,
  ): void {
    reply.hijack();
    const note = (message: string) =>
      logs.add(ctx.ref, { function_slug: slug, type: 'log', level: 'error', message });
    new FunctionProxy(req.raw, reply.raw, lease, log, limits, note, heads).start(path, host);
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
