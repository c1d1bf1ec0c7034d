/**
 * Image transformations: GET /render/image/{authenticated,public,sign}/{bucket}/{path*}.
 * Access as the reference: authenticated → the object under the caller's RLS; public → the bucket
 * must be public (read bypassing RLS); sign → a download token for this path, whose
 * `transformations` claim (set when the URL was signed with `transform`) decides the options.
 * Reply: the rendered bytes with their own Content-Type/Length, the object's ETag, Last-Modified and
 * Cache-Control (Expires for signed), `X-Transformations`, `Vary: Accept`, and
 * `X-Strata-Render-Cache: HIT|MISS`.
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SERVICE, requireCaller } from '../auth.js';
import { errors } from '../errors.js';
import { INERT_OBJECT_HEADERS } from '../../platform/inert-content.js';
import { assertKey } from '../keys.js';
import type { ObjectRow } from '../database/index.js';
import { findWithBucket, requireObject } from '../service/objects.js';
import { verifyUrlToken } from '../signing.js';
import { headerValue, objectParams, scopeOf, type StorageDeps } from '../routes/context.js';
import { TokenQuery } from '../routes/schemas.js';
import {
  TransformQuery,
  appliedSegments,
  parseTransformationsString,
  transformOptionsOf,
  type TransformOptions,
} from './options.js';
import { ImageRenderer } from './renderer.js';
import { OPERATIONS } from '../operations.js';

function dispositionOf(download: unknown): string | undefined {
  if (download === undefined) return undefined;
  const v = typeof download === 'string' ? download : '';
  if (v === '') return 'attachment;';
  const e = encodeURIComponent(v);
  return `attachment; filename=${e}; filename*=UTF-8''${e};`;
}

export async function imageRoutes(app: FastifyInstance, deps: StorageDeps): Promise<void> {
  const renderer = new ImageRenderer(deps.platform.config.image);

  const send = async (
    req: FastifyRequest,
    reply: FastifyReply,
    row: ObjectRow,
    options: TransformOptions,
    expires?: number,
  ): Promise<FastifyReply> => {
    const scope = scopeOf(deps, req);
    const { rendered, hit, applied } = await renderer.render(
      scope.project.ref,
      scope.backend,
      row,
      options,
      headerValue(req, 'accept'),
    );
    const m = row.metadata ?? ({} as Partial<NonNullable<ObjectRow['metadata']>>);
    reply.code(200);
    reply.header('content-type', rendered.contentType);
    reply.headers(INERT_OBJECT_HEADERS);
    reply.header('content-length', String(rendered.body.length));
    if (m.eTag) reply.header('etag', m.eTag);
    if (m.lastModified) reply.header('last-modified', new Date(m.lastModified).toUTCString());
    if (expires !== undefined) reply.header('expires', new Date(expires * 1000).toUTCString());
    else if (m.cacheControl) reply.header('cache-control', m.cacheControl);
    const segments = appliedSegments(applied);
    if (segments.length) reply.header('x-transformations', segments.join(','));
    reply.header('vary', 'Accept');
    reply.header('x-strata-render-cache', hit ? 'HIT' : 'MISS');
    const disposition = dispositionOf((req.query as Record<string, unknown>).download);
    if (disposition) reply.header('content-disposition', disposition);
    return reply.send(rendered.body);
  };

  type Transform = { Querystring: Static<typeof TransformQuery> };
  const transform = { schema: { querystring: TransformQuery } };
  app.get<Transform>('/render/image/authenticated/:bucket/*', transform, async (req, reply) => {
    const { project } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    const { bucket, key } = objectParams(req);
    const options = transformOptionsOf(req.query);
    assertKey(key);
    const row = await requireObject(project, caller, OPERATIONS.RENDER_AUTH_IMAGE, bucket, key);
    return send(req, reply, row, options);
  });

  app.get<Transform>('/render/image/public/:bucket/*', transform, async (req, reply) => {
    const { project } = scopeOf(deps, req);
    const { bucket, key } = objectParams(req);
    const options = transformOptionsOf(req.query);
    assertKey(key);
    const found = await findWithBucket(project, OPERATIONS.RENDER_PUBLIC_IMAGE, bucket, key);
    if (!found.isPublic) throw errors.noSuchBucket();
    if (!found.row) throw errors.noSuchKey();
    return send(req, reply, found.row, options);
  });

  const signed = { schema: { querystring: TokenQuery } };
  app.get<{ Querystring: Static<typeof TokenQuery> }>(
    '/render/image/sign/:bucket/*',
    signed,
    async (req, reply) => {
      const { project } = scopeOf(deps, req);
      const { bucket, key } = objectParams(req);
      const claims = await verifyUrlToken(project.jwtSecret, req.query.token, 'download', bucket, key);
      const row = await requireObject(project, SERVICE, OPERATIONS.RENDER_SIGNED_IMAGE, bucket, key);
      return send(req, reply, row, parseTransformationsString(claims.transformations ?? ''), claims.exp);
    },
  );
}
