/** JSON object routes: delete one and many, move, copy, list. */
import { parseJsonObject } from './upload-body.js';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { requireCaller } from '../auth.js';
import { errors } from '../errors.js';
import { assertBucketName, assertKey } from '../keys.js';
import { deleteObject, deleteObjects, listObjects, objectJson } from '../service/objects.js';
import { copyObject, moveObject } from '../service/transfers.js';
import { listObjectsV2 } from '../service/list-v2.js';
import { headerValue, objectParams, scopeOf, type StorageDeps } from './context.js';
import { BucketParams, ListCount, StringEnum } from './schemas.js';

function userMetadataHeader(v: string | undefined): Record<string, unknown> | undefined {
  return v === undefined ? undefined : parseJsonObject(Buffer.from(v, 'base64').toString('utf8'));
}

const TransferBody = Type.Object({
  bucketId: Type.String(),
  sourceKey: Type.String(),
  destinationKey: Type.String(),
  destinationBucket: Type.Optional(Type.String()),
});
const CopyBody = Type.Composite([
  TransferBody,
  Type.Object({
    metadata: Type.Optional(
      Type.Object({
        cacheControl: Type.Optional(Type.String()),
        mimetype: Type.Optional(Type.String()),
      }),
    ),
    copyMetadata: Type.Optional(Type.Boolean()),
  }),
]);
const DeleteManyBody = Type.Object({ prefixes: Type.Array(Type.String(), { minItems: 1 }) });
/** `sortBy.order` is compared case-insensitively, which an `enum` cannot say: checked in code. */
const SortBy = <const C extends readonly string[]>(columns: C) =>
  Type.Optional(
    Type.Object({ column: Type.Optional(StringEnum(columns)), order: Type.Optional(Type.String()) }),
  );
const ListBody = Type.Object({
  prefix: Type.String(),
  limit: Type.Optional(ListCount(1)),
  offset: Type.Optional(ListCount(0)),
  sortBy: SortBy(['name', 'updated_at', 'created_at', 'last_accessed_at']),
  search: Type.Optional(Type.String()),
});
/** `limit` keeps the reference's own message ("an integer between 1 and 1000"): checked in code. */
const ListV2Body = Type.Object({
  prefix: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Unknown()),
  cursor: Type.Optional(Type.String()),
  with_delimiter: Type.Optional(Type.Boolean()),
  sortBy: SortBy(['name', 'updated_at', 'created_at']),
});

function transferOf(body: Static<typeof TransferBody>) {
  const bucket = body.bucketId;
  const destinationBucket = body.destinationBucket || bucket;
  assertBucketName(bucket);
  assertBucketName(destinationBucket);
  return {
    bucket,
    sourceKey: body.sourceKey,
    destinationKey: body.destinationKey,
    destinationBucket,
  };
}

function sortOrderOf(order: string | undefined): 'asc' | 'desc' {
  const o = (order ?? 'asc').toLowerCase();
  if (o !== 'asc' && o !== 'desc')
    throw errors.invalidRequest('body/sortBy/order must be equal to one of the allowed values');
  return o;
}

export async function objectManageRoutes(app: FastifyInstance, deps: StorageDeps): Promise<void> {
  app.delete('/object/:bucket/*', async (req) => {
    const { project, backend } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    const { bucket, key } = objectParams(req);
    assertKey(key);
    const row = await deleteObject(project, caller, bucket, key);
    if (row.version) await backend.delete([{ bucket, key, version: row.version }]);
    return { message: 'Successfully deleted' };
  });

  app.delete<{ Params: Static<typeof BucketParams>; Body: Static<typeof DeleteManyBody> }>(
    '/object/:bucket',
    { schema: { params: BucketParams, body: DeleteManyBody } },
    async (req) => {
      const { project, backend } = scopeOf(deps, req);
      const caller = await requireCaller(req, project);
      assertBucketName(req.params.bucket);
      const rows = await deleteObjects(project, caller, req.params.bucket, req.body.prefixes);
      await backend.delete(
        rows.flatMap((r) => (r.version ? [{ bucket: r.bucket_id, key: r.name, version: r.version }] : [])),
      );
      return rows.map(objectJson);
    },
  );

  app.post<{ Body: Static<typeof TransferBody> }>(
    '/object/move',
    { schema: { body: TransferBody } },
    async (req) => {
      const scope = scopeOf(deps, req);
      const caller = await requireCaller(req, scope.project);
      await moveObject({ ...scope, caller, ...transferOf(req.body) });
      return { message: 'Successfully moved' };
    },
  );

  app.post<{ Body: Static<typeof CopyBody> }>('/object/copy', { schema: { body: CopyBody } }, async (req) => {
    const scope = scopeOf(deps, req);
    const caller = await requireCaller(req, scope.project);
    const body = req.body;
    const t = transferOf(body);
    const meta = body.metadata ?? {};
    const row = await copyObject(
      { ...scope, caller, ...t },
      {
        upsert: headerValue(req, 'x-upsert') === 'true',
        copyMetadata: body.copyMetadata !== false,
        cacheControl: meta.cacheControl,
        mimetype: meta.mimetype,
        userMetadata: userMetadataHeader(headerValue(req, 'x-metadata')),
      },
    );
    return { Id: row.id, Key: `${t.destinationBucket}/${t.destinationKey}`, ...objectJson(row) };
  });

  app.post<{ Params: Static<typeof BucketParams>; Body: Static<typeof ListBody> }>(
    '/object/list/:bucket',
    { schema: { params: BucketParams, body: ListBody } },
    async (req) => {
      const { project } = scopeOf(deps, req);
      const caller = await requireCaller(req, project);
      assertBucketName(req.params.bucket);
      const body = req.body;
      const order = sortOrderOf(body.sortBy?.order);
      return listObjects(project, caller, req.params.bucket, {
        prefix: body.prefix,
        limit: Math.min(body.limit ?? 100, 1500),
        offset: body.offset ?? 0,
        sortColumn: body.sortBy?.column ?? 'name',
        sortOrder: order,
        search: body.search ?? '',
      });
    },
  );

  app.post<{ Params: Static<typeof BucketParams>; Body: Static<typeof ListV2Body> }>(
    '/object/list-v2/:bucket',
    { schema: { params: BucketParams, body: ListV2Body } },
    async (req) => {
      const { project } = scopeOf(deps, req);
      const caller = await requireCaller(req, project);
      assertBucketName(req.params.bucket);
      const body = req.body;
      const limit = body.limit ?? 1000;
      if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw errors.invalidRequest('body/limit must be an integer between 1 and 1000');
      const order = sortOrderOf(body.sortBy?.order);
      return listObjectsV2(project, caller, req.params.bucket, {
        prefix: body.prefix ?? '',
        limit,
        cursor: body.cursor || undefined,
        withDelimiter: body.with_delimiter === true,
        column: body.sortBy?.column ?? 'name',
        order,
      });
    },
  );
}
