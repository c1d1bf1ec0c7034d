/**
 * Uploads with raw or multipart bodies: S10 (POST, `x-upsert`), S9 (PUT, always upsert) and the
 * signed upload (PUT /object/upload/sign, authorised by its token). Registered in a context whose
 * only body parsers leave the body as a stream (see index.ts).
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SERVICE, ownerUuid, requireCaller } from '../auth.js';
import { verifyUrlToken } from '../signing.js';
import { uploadObject } from '../service/uploads.js';
import { headerValue, objectParams, scopeOf, type StorageDeps } from './context.js';
import { TokenQuery } from './schemas.js';
import { readUploadBody } from './upload-body.js';
import { OPERATIONS } from '../operations.js';

/** Aborted when the client goes away before the upload is complete. */
function abortSignalOf(req: FastifyRequest): AbortSignal {
  const ac = new AbortController();
  req.raw.once('close', () => {
    if (!req.raw.complete) ac.abort(new Error('client closed the upload'));
  });
  return ac.signal;
}

export async function objectUploadRoutes(app: FastifyInstance, deps: StorageDeps): Promise<void> {
  const upload = (method: 'POST' | 'PUT') => async (req: FastifyRequest) => {
    const scope = scopeOf(deps, req);
    const caller = await requireCaller(req, scope.project);
    const { bucket, key } = objectParams(req);
    return uploadObject({
      ...scope,
      writer: caller,
      owner: ownerUuid(caller),
      ownerId: caller.sub ?? null,
      bucket,
      key,
      upsert: method === 'PUT' || headerValue(req, 'x-upsert') === 'true',
      operation: method === 'PUT' ? OPERATIONS.UPDATE_OBJECT : OPERATIONS.CREATE_OBJECT,
      body: (limit) => readUploadBody(req, limit),
      signal: abortSignalOf(req),
    });
  };
  app.post('/object/:bucket/*', upload('POST'));
  app.put('/object/:bucket/*', upload('PUT'));

  app.put<{ Querystring: Static<typeof TokenQuery> }>(
    '/object/upload/sign/:bucket/*',
    { schema: { querystring: TokenQuery } },
    async (req) => {
      const scope = scopeOf(deps, req);
      const { bucket, key } = objectParams(req);
      const claims = await verifyUrlToken(scope.project.jwtSecret, req.query.token, 'upload', bucket, key);
      const owner = claims.owner;
      const result = await uploadObject({
        ...scope,
        writer: SERVICE,
        owner: owner && ownerUuid({ ...SERVICE, sub: owner }) ? owner : null,
        ownerId: owner ?? null,
        bucket,
        key,
        upsert: claims.upsert,
        operation: OPERATIONS.UPLOAD_SIGN_OBJECT,
        body: (limit) => readUploadBody(req, limit),
        signal: abortSignalOf(req),
      });
      return { Key: result.Key };
    },
  );
}
