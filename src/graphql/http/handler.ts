/**
 * The serving forms, all on one GraphQLCore: createGraphQLHandler (`{base}/graphql/v1` for one
 * database, or one per request, as a Node `(req, res)` listener that also works as Express
 * middleware, and as a Fastify plugin), and graphqlRoutes (the platform's `{project}/graphql/v1`).
 * GraphQLCore takes one request in (method, URL, headers, body bytes, how to find its project) and
 * gives one answer out: the direct path (direct-post.ts) serves the common request, yoga
 * (yoga-server.ts, loaded on first use) the rest.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { CancelSignal } from '../../db/cancel-request.js';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  DATABASE_UNAVAILABLE_MESSAGE,
  isDatabaseUnavailable,
} from '../../db/connection-errors.js';
import type { Platform } from '../../platform/platform.js';
import { JSON_CONTENT_TYPE, jsonErrorBody, type HttpAnswer } from './core.js';
import { answerDirect, directGetParams, directParams } from './direct-post.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  endpointOf,
  GRAPHQL_PATH,
  limitsOf,
  schemaNoticesOf,
  type GraphQLHandlerOptions,
  type GraphQLTarget,
  type RequestLimits,
} from './options.js';
import type { StrataServerContext, StrataYoga } from './yoga-server.js';

export type { HttpAnswer };

// ── The core.

/**
 * A signal aborted when `res` closes before its answer was written: the client went away. A class
 * rather than an AbortController: this is made for every request, and an AbortSignal costs several
 * microseconds to create.
 */
class ClosedBeforeAnswer implements CancelSignal {
  aborted = false;
  private listeners: Set<() => void> | undefined;

  constructor(res: ServerResponse) {
    res.once('close', () => {
      if (res.writableFinished) return;
      this.aborted = true;
      const called = this.listeners;
      this.listeners = undefined;
      for (const listener of called ?? []) listener();
    });
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    this.listeners ??= new Set();
    this.listeners.add(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    this.listeners?.delete(listener);
  }
}

export function abortedWhenClosed(res: ServerResponse): CancelSignal {
  return new ClosedBeforeAnswer(res);
}

export type TargetResolver = () => GraphQLTarget | undefined | Promise<GraphQLTarget | undefined>;

const BODYLESS = new Set(['GET', 'HEAD', 'OPTIONS']);

function searchOf(url: string | undefined): string {
  const u = url ?? '';
  const q = u.indexOf('?');
  return q >= 0 ? u.slice(q) : '';
}

export class GraphQLCore {
  private yogaServer?: Promise<StrataYoga>;
  readonly maxBodyBytes: number;
  readonly limits: RequestLimits;
  private readonly logErrors: boolean;
  private readonly onCatalogNotices: ((notices: string[]) => void) | undefined;

  constructor(
    readonly endpoint: string,
    private readonly opts: GraphQLHandlerOptions,
  ) {
    this.maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.limits = limitsOf(opts);
    this.logErrors = opts.logging !== false;
    this.onCatalogNotices = schemaNoticesOf(opts);
  }

  /**
   * The graphql-yoga server, loaded and built on first use: the direct POST path (most traffic)
   * never needs it, and not loading it saves ~15 MB of resident memory.
   */
  yoga(): Promise<StrataYoga> {
    this.yogaServer ??= import('./yoga-server.js').then((m) => m.createStrataYoga(this.endpoint, this.opts));
    return this.yogaServer;
  }

  async answer(
    method: string,
    url: string | undefined,
    headers: IncomingHttpHeaders,
    body: Buffer | string | undefined,
    target: TargetResolver,
    /** Aborted when the client is gone (see `abortedWhenClosed`). */
    signal?: CancelSignal,
  ): Promise<HttpAnswer> {
    const post = directParams(method, headers, body);
    const params = post ?? directGetParams(method, url, headers);
    if (params) {
      return answerDirect(
        params,
        headers,
        target,
        {
          limits: this.limits,
          onUnexpectedError: (err) => {
            if (this.logErrors) console.error('[strata graphql]', err);
          },
          onCatalogNotices: this.onCatalogNotices,
        },
        post ? 'POST' : 'GET',
        signal,
      );
    }
    const ctx: StrataServerContext = { strataTarget: target, strataSignal: signal };
    const yoga = await this.yoga();
    const init: RequestInit = { method, headers: headers as Record<string, string> };
    if (!BODYLESS.has(method) && body !== undefined) init.body = body as unknown as BodyInit;
    const request = new yoga.fetchAPI.Request(`http://localhost${this.endpoint}${searchOf(url)}`, init);
    const response = await yoga.fetch(request, ctx);
    const out: Record<string, string> = {};
    response.headers.forEach((value, key) => {
      out[key] = value;
    });
    return {
      status: response.status,
      headers: out,
      body: response.body ? Buffer.from(await response.arrayBuffer()) : undefined,
    };
  }
}

// ── Node requests in, answers out.
// The body is read here (with the size limit) before the core sees the request, which keeps yoga's
// streaming body limiter off the hot path and gives 413 answers the same JSON shape as the other
// HTTP errors; bodies an Express parser already read are used as they are (the limit applies to
// them too).

class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`Request body too large: the limit is ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

class BadContentLengthError extends Error {
  constructor() {
    super('Content-Length header is invalid');
    this.name = 'BadContentLengthError';
  }
}

/**
 * Reads a Node request body into memory, up to `limit`: throws BodyTooLargeError as soon as the
 * declared (Content-Length, checked before reading) or received size passes it.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined) {
    if (!/^\d+$/.test(declared)) return Promise.reject(new BadContentLengthError());
    if (Number(declared) > limit) return Promise.reject(new BodyTooLargeError(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    /** Stops listening; false when the promise was already settled. */
    const settle = (): boolean => {
      if (done) return false;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      return true;
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Stop buffering; the rest is drained so the response can still be written.
        req.resume();
        if (settle()) reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (settle()) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      if (settle()) reject(err);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** A body another middleware already read (Express body parsers), as request bytes; undefined when none. */
function preReadBody(req: IncomingMessage & { body?: unknown }): Buffer | string | undefined {
  const b = req.body;
  if (b === undefined || b === null) return undefined;
  if (Buffer.isBuffer(b) || typeof b === 'string') return b;
  if (typeof b === 'object' && Object.keys(b).length === 0 && !req.readableEnded) return undefined;
  return JSON.stringify(b);
}

/** The body of a request, or the error response to send instead (413, 400). */
async function bodyOrError(
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

function sendJsonError(res: ServerResponse, status: number, message: string): void {
  const text = jsonErrorBody(message);
  res.writeHead(status, {
    'content-type': JSON_CONTENT_TYPE,
    'content-length': Buffer.byteLength(text),
    ...(status === 413 ? { connection: 'close' } : {}),
  });
  res.end(text);
}

function sendAnswer(res: ServerResponse, answer: HttpAnswer): void {
  const headers = { ...answer.headers };
  if (answer.body !== undefined) headers['content-length'] = String(Buffer.byteLength(answer.body));
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}

// ── Fastify.

export interface FastifyGraphQLRouteOptions {
  core: GraphQLCore;
  targetOf: (req: FastifyRequest) => GraphQLTarget | undefined | Promise<GraphQLTarget | undefined>;
}

/**
 * The endpoint as Fastify routes (GET, POST, OPTIONS). Register inside its own encapsulated
 * context (app.register): it replaces the content-type parsers there.
 */
export async function registerGraphQLRoutes(
  app: FastifyInstance,
  opts: FastifyGraphQLRouteOptions,
): Promise<void> {
  const { core } = opts;
  // Bodies reach the core as bytes (it parses them), read by Fastify with the limit.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: core.maxBodyBytes }, (_req, body, done) =>
    done(null, body),
  );
  app.route({
    method: ['GET', 'POST', 'OPTIONS'],
    url: core.endpoint,
    bodyLimit: core.maxBodyBytes,
    errorHandler: (err: FastifyError, _req, reply) => {
      if (isDatabaseUnavailable(err)) {
        return reply
          .status(503)
          .header('content-type', JSON_CONTENT_TYPE)
          .header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
          .send(jsonErrorBody(DATABASE_UNAVAILABLE_MESSAGE));
      }
      const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
      const message =
        err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? `Request body too large: the limit is ${core.maxBodyBytes} bytes`
          : status === 500
            ? 'Internal server error'
            : err.message;
      if (status === 500) reply.log.error(err);
      return reply.status(status).header('content-type', JSON_CONTENT_TYPE).send(jsonErrorBody(message));
    },
    handler: async (req, reply) => {
      const body = Buffer.isBuffer(req.body) ? req.body : undefined;
      const answer = await core.answer(
        req.method,
        req.url,
        req.headers,
        body,
        () => opts.targetOf(req),
        abortedWhenClosed(reply.raw),
      );
      return reply.status(answer.status).headers(answer.headers).send(answer.body);
    },
  });
}

/**
 * POST/GET {project}/graphql/v1 on the platform's Fastify app: the project comes from the
 * platform's routing (req.project), its pool and keys serve the request.
 * Limits (config.ts): the platform's body limit, STRATA_GRAPHQL_MAX_DEPTH and
 * STRATA_GRAPHQL_MAX_SELECTIONS.
 */
export async function graphqlRoutes(app: FastifyInstance, opts: { platform: Platform }): Promise<void> {
  const { config } = opts.platform;
  const core = new GraphQLCore(GRAPHQL_PATH, {
    maxBodyBytes: config.bodyLimit,
    maxDepth: config.graphqlMaxDepth,
    maxSelections: config.graphqlMaxSelections,
    logging: config.logRequests ? 'info' : 'error',
  });
  await registerGraphQLRoutes(app, { core, targetOf: (req) => req.project });
}

// ── createGraphQLHandler.

export interface GraphQLHandler {
  /** Node `http` listener; as Express middleware, other paths go to `next()`. */
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void;
  /** The served path, e.g. `/graphql/v1`. */
  readonly endpoint: string;
  /** The same endpoint as a Fastify plugin (register it without a prefix; use `basePath` instead). */
  readonly fastifyPlugin: FastifyPluginAsync;
  /** The underlying graphql-yoga server (built on first use). */
  yoga(): Promise<StrataYoga>;
}

function targetResolver(
  opts: GraphQLHandlerOptions,
): (req: IncomingMessage) => GraphQLTarget | undefined | Promise<GraphQLTarget | undefined> {
  if (opts.getTarget) return opts.getTarget;
  const { pool, getPool, jwtSecret, anonKey, serviceRoleKey } = opts;
  if (!jwtSecret) throw new Error('createGraphQLHandler: jwtSecret is required (or getTarget)');
  if (pool) {
    const target: GraphQLTarget = { pool, jwtSecret, anonKey, serviceRoleKey };
    return () => target;
  }
  if (getPool) return async (req) => ({ pool: await getPool(req), jwtSecret, anonKey, serviceRoleKey });
  throw new Error('createGraphQLHandler: one of pool, getPool or getTarget is required');
}

function pathOf(url: string | undefined): string {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return q >= 0 ? u.slice(0, q) : u;
}

export function createGraphQLHandler(opts: GraphQLHandlerOptions): GraphQLHandler {
  const endpoint = endpointOf(opts.basePath);
  const resolveTarget = targetResolver(opts);
  const core = new GraphQLCore(endpoint, opts);

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { body, error } = await bodyOrError(req, core.maxBodyBytes);
    if (error) return sendJsonError(res, error.status, error.message);
    const method = req.method ?? 'GET';
    sendAnswer(
      res,
      await core.answer(method, req.url, req.headers, body, () => resolveTarget(req), abortedWhenClosed(res)),
    );
  };

  const listener = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void => {
    if (pathOf(req.url) !== endpoint) {
      if (next) next();
      else sendJsonError(res, 404, 'Not found');
      return;
    }
    serve(req, res).catch((err: unknown) => {
      if (next) return next(err);
      if (!res.headersSent) sendJsonError(res, 500, 'Internal server error');
      else res.destroy(err instanceof Error ? err : undefined);
    });
  };

  const fastifyPlugin: FastifyPluginAsync = (app) =>
    registerGraphQLRoutes(app, { core, targetOf: (req) => resolveTarget(req.raw) });

  return Object.assign(listener, { endpoint, fastifyPlugin, yoga: () => core.yoga() });
}
