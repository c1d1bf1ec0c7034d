/**
 * Signed URLs: create one (S13) or many (S15), download through one (S14), and signed uploads'
 * URL creation (POST /object/upload/sign, with an RLS dry run of the write at signing time).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SERVICE, ownerUuid, requireCaller } from '../auth.js';
import { errors } from '../errors.js';
import { assertBucketName, assertKey } from '../keys.js';
import { parseExpiresIn, signDownloadToken, signUploadToken, verifyUrlToken } from '../signing.js';
import { bucketLimits } from '../service/buckets.js';
import { dryRunWrite } from '../service/object-writes.js';
import { requireObject, visibleNames } from '../service/objects.js';
import { bodyOf, headerValue, objectParams, scopeOf, type StorageDeps } from './context.js';
import { renderObject } from './render.js';
import { signedTransformations } from '../image/options.js';

/** Lifetime of signed upload URLs. */
const UPLOAD_URL_EXPIRES_IN = 2 * 3600;

export async function signedRoutes(app: FastifyInstance, deps: StorageDeps): Promise<void> {
  app.post('/object/sign/:bucket/*', async (req) => {
    const { project } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    const { bucket, key } = objectParams(req);
    const body = bodyOf(req);
    const expiresIn = parseExpiresIn(body.expiresIn);
    const transformations = signedTransformations(body, deps.platform.config.image.enabled);
    assertKey(key);
    await requireObject(project, caller, 'storage.object.sign', bucket, key);
    const token = await signDownloadToken(project.jwtSecret, bucket, key, expiresIn, transformations);
    const route = transformations ? 'render/image' : 'object';
    return { signedURL: `/${route}/sign/${bucket}/${key}?token=${token}` };
  });

  app.post<{ Params: { bucket: string } }>('/object/sign/:bucket', async (req) => {
    const { project } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    const bucket = req.params.bucket;
    assertBucketName(bucket);
    const body = bodyOf(req);
    const expiresIn = parseExpiresIn(body.expiresIn);
    const paths = body.paths;
    if (paths === undefined) throw errors.invalidRequest("body must have required property 'paths'");
    if (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string'))
      throw errors.invalidRequest('body/paths must be array');
    if (paths.length < 1) throw errors.invalidRequest('body/paths must NOT have fewer than 1 items');
    if (paths.length > 1000) throw errors.invalidRequest('body/paths must NOT have more than 1000 items');
    const visible = await visibleNames(
      project,
      caller,
      'storage.object.sign_many',
      bucket,
      paths as string[],
    );
    return Promise.all(
      (paths as string[]).map(async (p) =>
        visible.has(p)
          ? {
              error: null,
              path: p,
              signedURL: `/object/sign/${bucket}/${p}?token=${await signDownloadToken(project.jwtSecret, bucket, p, expiresIn)}`,
            }
          : {
              error: 'Either the object does not exist or you do not have access to it',
              path: p,
              signedURL: null,
            },
      ),
    );
  });

  const signedDownload = async (req: FastifyRequest, reply: FastifyReply) => {
    const scope = scopeOf(deps, req);
    const { bucket, key } = objectParams(req);
    const token = (req.query as Record<string, unknown>).token;
    if (typeof token !== 'string' || token === '')
      throw errors.invalidRequest("querystring must have required property 'token'");
    const claims = await verifyUrlToken(scope.project.jwtSecret, token, 'download', bucket, key);
    const read = () => requireObject(scope.project, SERVICE, 'storage.object.get_signed', bucket, key);
    return renderObject(req, reply, scope.backend, await read(), { expires: claims.exp, reload: read });
  };
  app.route({
    method: ['GET', 'HEAD'],
    url: '/object/sign/:bucket/*',
    handler: signedDownload,
    exposeHeadRoute: false,
  });

  app.post('/object/upload/sign/:bucket/*', async (req) => {
    const { project } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    const { bucket, key } = objectParams(req);
    assertBucketName(bucket);
    assertKey(key);
    await bucketLimits(project, bucket);
    const upsert = headerValue(req, 'x-upsert') === 'true';
    await dryRunWrite(
      project,
      caller,
      'storage.object.sign_upload_url',
      {
        bucket,
        key,
        owner: ownerUuid(caller),
        ownerId: caller.sub ?? null,
        metadata: {},
        userMetadata: {},
        version: null,
      },
      upsert,
    );
    const token = await signUploadToken(project.jwtSecret, bucket, key, {
      owner: caller.sub,
      upsert,
      expiresIn: UPLOAD_URL_EXPIRES_IN,
    });
    return { url: `/object/upload/sign/${bucket}/${key}?token=${token}`, token };
  });
}
