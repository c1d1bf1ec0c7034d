/**
 * The S3 protocol at {project}/storage/v1/s3 (path-style: /s3/{bucket}/{key}; registered with the
 * prefix /s3). Every request is
 * SigV4-authenticated before its body is read; operations are chosen by method, path and query as
 * S3 does; errors are S3 XML `<Error><Code/><Message/><Resource/></Error>` with the logical status
 * (the reference's S3 error handler). Bodies stay streams (no parser reads them ahead).
 */
import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { setErrorHeaders } from '../error-reply.js';
import { DOWNLOAD_HEADERS, StorageError, errors, fromSystemError } from '../errors.js';
import { assertBucketName } from '../keys.js';
import { scopeOf, type StorageDeps } from '../routes/context.js';
import { authenticateS3, type S3Auth } from './auth.js';
import {
  createOne,
  deleteOneBucket,
  headBucket,
  listAllBuckets,
  listObjectsV1,
  listObjectsV2,
} from './buckets.js';
import type { S3Request } from './context.js';
import { s3Errors } from './errors.js';
import {
  abortMultipartUpload,
  completeMultipartUpload,
  createMultipartUpload,
  listParts,
  uploadPart,
  uploadPartCopy,
} from './multipart.js';
import { listMultipartUploads } from './multipart-list.js';
import { getBucketVersioning, getObjectTagging } from './subresources.js';
import { authenticatePostPolicy, isPostPolicyRequest, postObject } from './post-policy.js';
import { copyOne, deleteMany, deleteOne, getObject, putObject } from './objects.js';
import { rawQuery } from './sigv4.js';
import { toXml } from './xml.js';

const callers = new WeakMap<FastifyRequest, S3Auth>();

/** Also the object's own headers: an S3 error reply carries none of them. */
const S3_DOWNLOAD_HEADERS = [...DOWNLOAD_HEADERS, 'etag', 'cache-control'];

function toS3Error(err: FastifyError | Error): StorageError {
  if (err instanceof StorageError) return err;
  const system = fromSystemError(err);
  if (system) return system;
  const e = err as FastifyError;
  if (e.code === 'FST_ERR_BAD_URL') return s3Errors.invalidUri();
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500)
    return new StorageError('InvalidRequest', e.statusCode, 'InvalidRequest', e.message, e.statusCode);
  return errors.internal();
}

function resourceOf(req: FastifyRequest): string {
  const path = (req.raw.url ?? '').split('?')[0] ?? '';
  const i = path.indexOf('/s3');
  let resource = i >= 0 ? path.slice(i + 3) : path;
  try {
    resource = decodeURIComponent(resource);
  } catch {
    // keep it encoded
  }
  return resource
    .split('/')
    .filter((s) => s)
    .join('/');
}

export function sendS3Error(
  err: FastifyError | Error,
  req: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const se = toS3Error(err);
  if (se.code === 'InternalError') req.log.error({ err }, 's3 request failed');
  const meta = Object.keys(reply.getHeaders()).filter((name) => name.startsWith('x-amz-meta-'));
  setErrorHeaders(req, reply, se, [...S3_DOWNLOAD_HEADERS, ...meta]);
  // Logical status on this surface (404 NoSuchKey, 403 AccessDenied, 409 conflicts, 413 ...).
  const status = se.status >= 400 && se.status < 600 ? se.status : se.http;
  reply.code(status === 544 ? 500 : status);
  if (req.method === 'HEAD' || reply.raw.headersSent) return reply.send();
  return reply
    .type('application/xml')
    .send(toXml('Error', { Code: se.code, Message: se.message, Resource: resourceOf(req) }, false));
}

export async function s3Routes(app: FastifyInstance, deps: StorageDeps): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
  app.setErrorHandler(sendS3Error);
  app.setNotFoundHandler((req, reply) => sendS3Error(s3Errors.methodNotAllowed(), req, reply));

  // Form parsing for POST policy uploads only: other bodies stay raw streams (the parser leaves them unread).
  await app.register(multipart);

  app.addHook('preHandler', async (req) => {
    const { project } = scopeOf(deps, req);
    callers.set(
      req,
      isPostPolicyRequest(req)
        ? await authenticatePostPolicy(req, deps.platform, project)
        : await authenticateS3(req, deps.platform, project),
    );
  });

  const ctx = (req: FastifyRequest, reply: FastifyReply): S3Request => {
    const scope = scopeOf(deps, req);
    const params = req.params as { bucket?: string; '*'?: string };
    const auth = callers.get(req);
    if (!auth) throw s3Errors.accessDenied('Missing signature');
    const bucket = params.bucket ?? '';
    if (bucket !== '') assertBucketName(bucket);
    return {
      req,
      reply,
      platform: deps.platform,
      project: scope.project,
      backend: scope.backend,
      caller: auth.caller,
      chunks: auth.chunks,
      globalLimit: scope.globalLimit,
      bucket,
      key: params['*'] ?? '',
      query: rawQuery(req),
    };
  };
  const has = (r: S3Request, name: string) => r.query[name] !== undefined;
  const one = (r: S3Request, name: string) => {
    const v = r.query[name];
    return (Array.isArray(v) ? v[0] : v) ?? '';
  };

  app.get('/', async (req, reply) => listAllBuckets(ctx(req, reply)));

  const bucketLevel = async (req: FastifyRequest, reply: FastifyReply) => {
    const r = ctx(req, reply);
    switch (req.method) {
      case 'GET':
        if (has(r, 'location'))
          return reply
            .type('application/xml')
            .send(toXml('LocationConstraint', { '#text': deps.platform.config.s3Protocol.region }));
        if (has(r, 'versioning')) return getBucketVersioning(r);
        if (has(r, 'uploads')) return listMultipartUploads(r);
        if (has(r, 'lifecycle') || has(r, 'policy') || has(r, 'acl'))
          throw s3Errors.notImplemented('This bucket operation');
        return one(r, 'list-type') === '2' ? listObjectsV2(r) : listObjectsV1(r);
      case 'HEAD':
        return headBucket(r);
      case 'PUT':
        return createOne(r);
      case 'DELETE':
        return deleteOneBucket(r);
      case 'POST':
        if (has(r, 'delete')) return deleteMany(r);
        if (isPostPolicyRequest(req)) return postObject(r);
        throw s3Errors.methodNotAllowed();
      default:
        throw s3Errors.methodNotAllowed();
    }
  };

  const objectLevel = async (req: FastifyRequest, reply: FastifyReply) => {
    const r = ctx(req, reply);
    if (r.key === '') return bucketLevel(req, reply);
    const uploadId = has(r, 'uploadId') ? one(r, 'uploadId') : undefined;
    switch (req.method) {
      case 'GET':
        if (uploadId !== undefined) return listParts(r, uploadId);
        if (has(r, 'tagging')) return getObjectTagging(r);
        return getObject(r);
      case 'HEAD':
        return getObject(r);
      case 'PUT': {
        // PutObjectTagging would otherwise overwrite the object with the tagging document.
        if (has(r, 'tagging') || has(r, 'acl')) throw s3Errors.notImplemented('This object operation');
        const source = req.headers['x-amz-copy-source'];
        if (uploadId !== undefined) {
          if (typeof source === 'string') return uploadPartCopy(r, uploadId, source);
          return uploadPart(r, uploadId);
        }
        if (typeof source === 'string') return copyOne(r, source);
        return putObject(r);
      }
      case 'DELETE':
        if (has(r, 'tagging')) throw s3Errors.notImplemented('This object operation');
        if (uploadId !== undefined) return abortMultipartUpload(r, uploadId);
        return deleteOne(r);
      case 'POST':
        if (has(r, 'uploads')) return createMultipartUpload(r);
        if (uploadId !== undefined) return completeMultipartUpload(r, uploadId);
        throw s3Errors.methodNotAllowed();
      default:
        throw s3Errors.methodNotAllowed();
    }
  };

  const methods = ['GET', 'HEAD', 'PUT', 'DELETE', 'POST'] as const;
  app.route({ method: [...methods], url: '/:bucket', handler: bucketLevel, exposeHeadRoute: false });
  app.route({ method: [...methods], url: '/:bucket/*', handler: objectLevel, exposeHeadRoute: false });
}
