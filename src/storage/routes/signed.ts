/**
 * Signed URLs: create one (S13) or many (S15), download through one (S14), and signed uploads'
 * URL creation (POST /object/upload/sign, with an RLS dry run of the write at signing time).
 */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SERVICE, ownerUuid, requireCaller } from '../auth.js';
import { assertBucketName, assertKey } from '../keys.js';
import { ExpiresIn, checkExpiresIn, signDownloadToken, signUploadToken, verifyUrlToken } from '../signing.js';
import { bucketLimits } from '../service/buckets.js';
import { dryRunWrite } from '../service/object-writes.js';
import { requireObject, visibleNames } from '../service/objects.js';
import { headerValue, objectParams, scopeOf, type StorageDeps } from './context.js';
import { BucketParams, TokenQuery } from './schemas.js';
import { renderObject } from './render.js';
import { TransformQuery, signedTransformations } from '../image/options.js';
import { OPERATIONS } from '../operations.js';

/** Lifetime of signed upload URLs. */
const UPLOAD_URL_EXPIRES_IN = 2 * 3600;

const SignBody = Type.Object({
  expiresIn: ExpiresIn,
  transform: Type.Optional(Type.Object(TransformQuery.properties, { nullable: true })),
});
const SignManyBody = Type.Object({
  expiresIn: ExpiresIn,
  paths: Type.Array(Type.String(), { minItems: 1, maxItems: 1000 }),
});

export async function signedRoutes(app: FastifyInstance, deps: StorageDeps): Promise<void> {
  app.post<{ Body: Static<typeof SignBody> }>(
    '/object/sign/:bucket/*',
    { schema: { body: SignBody } },
    async (req) => {
      const { project } = scopeOf(deps, req);
      const caller = await requireCaller(req, project);
      const { bucket, key } = objectParams(req);
      const expiresIn = checkExpiresIn(req.body.expiresIn);
      const transformations = signedTransformations(req.body.transform, deps.platform.config.image.enabled);
      assertKey(key);
      await requireObject(project, caller, OPERATIONS.SIGN_OBJECT_URL, bucket, key);
      const token = await signDownloadToken(project.jwtSecret, bucket, key, expiresIn, transformations);
      const route = transformations ? 'render/image' : 'object';
      return { signedURL: `/${route}/sign/${bucket}/${key}?token=${token}` };
    },
  );

  app.post<{ Params: Static<typeof BucketParams>; Body: Static<typeof SignManyBody> }>(
    '/object/sign/:bucket',
    { schema: { params: BucketParams, body: SignManyBody } },
    async (req) => {
      const { project } = scopeOf(deps, req);
      const caller = await requireCaller(req, project);
      const bucket = req.params.bucket;
      assertBucketName(bucket);
      const expiresIn = checkExpiresIn(req.body.expiresIn);
      const paths = req.body.paths;
      const visible = await visibleNames(project, caller, OPERATIONS.SIGN_OBJECT_URLS, bucket, paths);
      return Promise.all(
        paths.map(async (p) =>
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
    },
  );

  const signedDownload = async (
    req: FastifyRequest<{ Querystring: Static<typeof TokenQuery> }>,
    reply: FastifyReply,
  ) => {
    const scope = scopeOf(deps, req);
    const { bucket, key } = objectParams(req);
    const claims = await verifyUrlToken(scope.project.jwtSecret, req.query.token, 'download', bucket, key);
    const read = () => requireObject(scope.project, SERVICE, OPERATIONS.GET_SIGNED_OBJECT, bucket, key);
    return renderObject(req, reply, scope.backend, await read(), { expires: claims.exp, reload: read });
  };
  app.route({
    method: ['GET', 'HEAD'],
    url: '/object/sign/:bucket/*',
    schema: { querystring: TokenQuery },
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
      OPERATIONS.SIGN_UPLOAD_URL,
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
