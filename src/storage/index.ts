/**
 * Storage API, mounted at {project}/storage/v1: buckets, objects, signed URLs, wire-compatible
 * with supabase/storage (`src/http/routes` there). Two encapsulated contexts share one router:
 * upload routes, whose bodies stay streams whatever their Content-Type (multipart is parsed
 * lazily by @fastify/multipart), and JSON routes.
 */
import { wellFormedReviver } from '../db/well-formed.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import type { Platform } from '../platform/platform.js';
import { Backends } from './backend/index.js';
import { setErrorHeaders } from './error-reply.js';
import { DOWNLOAD_HEADERS, StorageError, errors, fromSystemError } from './errors.js';
import { bucketRoutes } from './routes/buckets.js';
import { cdnPurgeRoutes } from './routes/cdn-purge.js';
import type { StorageDeps } from './routes/context.js';
import { objectManageRoutes } from './routes/objects-manage.js';
import { objectReadRoutes } from './routes/objects-read.js';
import { objectUploadRoutes } from './routes/objects-upload.js';
import { opsRoutes, registerCors } from './routes/ops.js';
import { signedRoutes } from './routes/signed.js';
import { imageRoutes } from './image/routes.js';
import { icebergRoutes } from './iceberg/routes.js';
import { s3Routes, sendS3Error } from './s3/routes.js';
import { serializeRequest } from './log-redaction.js';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../db/connection-errors.js';
import { StorageJanitor } from './reconcile.js';
import { TusServers, tusRoutes } from './tus/routes.js';
import { assertNoNul, queryHasNul } from './nul.js';
import { vectorRoutes } from './vector/routes.js';

function toStorageError(err: FastifyError | Error): StorageError {
  if (err instanceof StorageError) return err;
  if (isDatabaseUnavailable(err)) return errors.databaseUnavailable(err);
  const system = fromSystemError(err);
  if (system) return system;
  const e = err as FastifyError & { part?: unknown };
  // A route schema refused the input: Fastify words it `<part>/<path> <Ajv message>`.
  if (e.code === 'FST_ERR_VALIDATION' || e.validation) return errors.invalidRequest(e.message);
  if (e.code === 'FST_REQ_FILE_TOO_LARGE') return errors.entityTooLarge();
  if (e.code === 'FST_FILES_LIMIT' || e.code === 'FST_FIELDS_LIMIT' || e.code === 'FST_PARTS_LIMIT')
    return errors.invalidRequest(e.message);
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return errors.invalidContentType();
  if (e.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' || e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return errors.invalidRequest(e.message);
  }
  if (
    e.code === 'FST_INVALID_MULTIPART_CONTENT_TYPE' ||
    (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500)
  ) {
    return errors.invalidRequest(e.message);
  }
  return errors.internal();
}

/**
 * Errors Fastify answers before any route runs (an undecodable path, an over-long parameter), in
 * this surface's shape: S3 XML under /s3, the Storage envelope elsewhere.
 */
export function sendStorageFrameworkError(
  err: FastifyError,
  req: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  return S3_PATH.test(req.url) ? sendS3Error(err, req, reply) : sendError(err, req, reply);
}
const S3_PATH = /^\/storage\/v1\/s3(?=[/?]|$)/;

function sendError(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const se = toStorageError(err);
  if (se.code === 'InternalError') req.log.error({ err }, 'storage request failed');
  setErrorHeaders(req, reply, se, DOWNLOAD_HEADERS);
  reply.code(se.http);
  if (se.http === 503) reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
  if (req.method === 'HEAD' || reply.raw.headersSent) return reply.send();
  return reply.type('application/json; charset=utf-8').send(se.toJSON());
}

/** No body (no Content-Type) or a JSON `null` is validated as an empty object. */
async function absentBodyIsEmpty(req: FastifyRequest): Promise<void> {
  if (req.body === undefined || req.body === null) req.body = {};
}

/** JSON bodies; an empty body (storage-js sends `{}`, others nothing) is an empty object. */
function parseJsonBody(
  _req: FastifyRequest,
  body: string,
  done: (err: Error | null, body?: unknown) => void,
): void {
  if (body.trim() === '') {
    done(null, {});
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body, wellFormedReviver);
    assertNoNul(parsed, 'body');
  } catch (err) {
    done(err instanceof StorageError ? err : errors.invalidRequest('Body is not valid JSON'));
    return;
  }
  done(null, parsed);
}

export async function storageRoutes(app: FastifyInstance, opts: { platform: Platform }): Promise<void> {
  await app.register(storageApi, { platform: opts.platform, logSerializers: { req: serializeRequest } } as {
    platform: Platform;
  });
}

async function storageApi(app: FastifyInstance, opts: { platform: Platform }): Promise<void> {
  const deps: StorageDeps = { platform: opts.platform, backends: await Backends.load(opts.platform.config) };
  const tus = new TusServers(deps);
  const janitor = new StorageJanitor(opts.platform, deps.backends, app.log);
  janitor.also((project, before) => tus.sweep(project, before));
  app.addHook('onReady', async () => janitor.start());
  app.addHook('onClose', async () => {
    await janitor.stop();
    await tus.close();
    deps.backends.close();
  });
  app.setErrorHandler(sendError);
  app.setNotFoundHandler((req, reply) => {
    // Routes are named relative to the storage base, as the reference (behind its gateway) names them.
    const path = (req.url.split('?', 1)[0] ?? '').replace(/^\/storage\/v1(?=\/|$)/, '') || '/';
    return sendError(
      req.project ? errors.routeNotFound(req.method, path) : errors.projectNotFound(),
      req,
      reply,
    );
  });
  app.addHook('onRequest', async (req) => {
    if (!req.project) throw errors.projectNotFound();
    if (queryHasNul(req.url)) throw errors.invalidRequest('The query string must not contain NUL bytes');
  });
  registerCors(app);
  await app.register(opsRoutes, { platform: opts.platform });

  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    await raw.register(multipart);
    await raw.register(objectUploadRoutes, deps);
    await raw.register(tusRoutes, { ...deps, tus });
  });

  await app.register(s3Routes, { ...deps, prefix: '/s3' });
  await app.register(icebergRoutes, { ...deps, prefix: '/iceberg' });

  await app.register(async (json) => {
    const limit = opts.platform.config.bodyLimit;
    json.removeAllContentTypeParsers();
    json.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: limit }, parseJsonBody);
    json.addContentTypeParser('*', { parseAs: 'string', bodyLimit: limit }, (_req, _body, done) =>
      done(null, {}),
    );
    json.addHook('preValidation', absentBodyIsEmpty);
    await json.register(bucketRoutes, deps);
    await json.register(objectReadRoutes, deps);
    await json.register(objectManageRoutes, deps);
    await json.register(signedRoutes, deps);
    await json.register(imageRoutes, deps);
    await json.register(cdnPurgeRoutes, deps);
    await json.register(vectorRoutes, { ...deps, prefix: '/vector' });
  });
}
