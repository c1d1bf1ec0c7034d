/** JSON object routes: delete one (S7) and many (S11), move (S16), copy (S19), list (S17). */
import type { FastifyInstance } from 'fastify';
import { requireCaller } from '../auth.js';
import { errors } from '../errors.js';
import { assertBucketName, assertKey } from '../keys.js';
import { deleteObject, deleteObjects, listObjects, objectJson } from '../service/objects.js';
import { copyObject, moveObject } from '../service/transfers.js';
import { listObjectsV2 } from '../service/list-v2.js';
import { bodyOf, headerValue, objectParams, requireField, scopeOf, type StorageDeps } from './context.js';

function userMetadataHeader(v: string | undefined): Record<string, unknown> | undefined {
  if (v === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(v, 'base64').toString('utf8'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function transferBody(body: Record<string, unknown>) {
  requireField(body, 'bucketId', 'string');
  requireField(body, 'sourceKey', 'string');
  requireField(body, 'destinationKey', 'string');
  const bucket = body.bucketId as string;
  const destinationBucket =
    typeof body.destinationBucket === 'string' && body.destinationBucket !== ''
      ? body.destinationBucket
      : bucket;
  assertBucketName(bucket);
  assertBucketName(destinationBucket);
  return {
    bucket,
    sourceKey: body.sourceKey as string,
    destinationKey: body.destinationKey as string,
    destinationBucket,
  };
}

const SORT_COLUMNS = ['name', 'updated_at', 'created_at', 'last_accessed_at'];

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

  app.delete<{ Params: { bucket: string } }>('/object/:bucket', async (req) => {
    const { project, backend } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    assertBucketName(req.params.bucket);
    const prefixes = bodyOf(req).prefixes;
    if (prefixes === undefined) throw errors.invalidRequest("body must have required property 'prefixes'");
    if (!Array.isArray(prefixes) || prefixes.some((p) => typeof p !== 'string'))
      throw errors.invalidRequest('body/prefixes must be array');
    if (prefixes.length < 1) throw errors.invalidRequest('body/prefixes must NOT have fewer than 1 items');
    const rows = await deleteObjects(project, caller, req.params.bucket, prefixes as string[]);
    await backend.delete(
      rows.flatMap((r) => (r.version ? [{ bucket: r.bucket_id, key: r.name, version: r.version }] : [])),
    );
    return rows.map(objectJson);
  });

  app.post('/object/move', async (req) => {
    const scope = scopeOf(deps, req);
    const caller = await requireCaller(req, scope.project);
    await moveObject({ ...scope, caller, ...transferBody(bodyOf(req)) });
    return { message: 'Successfully moved' };
  });

  app.post('/object/copy', async (req) => {
    const scope = scopeOf(deps, req);
    const caller = await requireCaller(req, scope.project);
    const body = bodyOf(req);
    const t = transferBody(body);
    const meta =
      body.metadata && typeof body.metadata === 'object' ? (body.metadata as Record<string, unknown>) : {};
    const row = await copyObject(
      { ...scope, caller, ...t },
      {
        upsert: headerValue(req, 'x-upsert') === 'true',
        copyMetadata: body.copyMetadata !== false,
        cacheControl: typeof meta.cacheControl === 'string' ? meta.cacheControl : undefined,
        mimetype: typeof meta.mimetype === 'string' ? meta.mimetype : undefined,
        userMetadata: userMetadataHeader(headerValue(req, 'x-metadata')),
      },
    );
    return { Id: row.id, Key: `${t.destinationBucket}/${t.destinationKey}`, ...objectJson(row) };
  });

  app.post<{ Params: { bucket: string } }>('/object/list/:bucket', async (req) => {
    const { project } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    assertBucketName(req.params.bucket);
    const body = bodyOf(req);
    if (typeof body.prefix !== 'string')
      throw errors.invalidRequest("body must have required property 'prefix'");
    const int = (v: unknown, name: string, min: number, d: number) => {
      if (v === undefined || v === null) return d;
      if (typeof v !== 'number' || !Number.isInteger(v))
        throw errors.invalidRequest(`body/${name} must be integer`);
      if (v < min) throw errors.invalidRequest(`body/${name} must be >= ${min}`);
      return v;
    };
    const sortBy = (body.sortBy ?? {}) as Record<string, unknown>;
    const column = sortBy.column ?? 'name';
    const order = sortBy.order ?? 'asc';
    if (!SORT_COLUMNS.includes(String(column)))
      throw errors.invalidRequest('body/sortBy/column must be equal to one of the allowed values');
    if (!['asc', 'desc'].includes(String(order).toLowerCase()))
      throw errors.invalidRequest('body/sortBy/order must be equal to one of the allowed values');
    return listObjects(project, caller, req.params.bucket, {
      prefix: body.prefix,
      limit: Math.min(int(body.limit, 'limit', 1, 100), 1500),
      offset: int(body.offset, 'offset', 0, 0),
      sortColumn: String(column),
      sortOrder: String(order).toLowerCase(),
      search: typeof body.search === 'string' ? body.search : '',
    });
  });

  app.post<{ Params: { bucket: string } }>('/object/list-v2/:bucket', async (req) => {
    const { project } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    assertBucketName(req.params.bucket);
    const body = bodyOf(req);
    const limit = body.limit ?? 1000;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw errors.invalidRequest('body/limit must be an integer between 1 and 1000');
    const sortBy = (body.sortBy ?? {}) as Record<string, unknown>;
    const column = String(sortBy.column ?? 'name');
    const order = String(sortBy.order ?? 'asc').toLowerCase();
    if (!['name', 'updated_at', 'created_at'].includes(column))
      throw errors.invalidRequest('body/sortBy/column must be equal to one of the allowed values');
    if (!['asc', 'desc'].includes(order))
      throw errors.invalidRequest('body/sortBy/order must be equal to one of the allowed values');
    return listObjectsV2(project, caller, req.params.bucket, {
      prefix: typeof body.prefix === 'string' ? body.prefix : '',
      limit,
      cursor: typeof body.cursor === 'string' && body.cursor !== '' ? body.cursor : undefined,
      withDelimiter: body.with_delimiter === true,
      column: column as 'name' | 'updated_at' | 'created_at',
      order: order as 'asc' | 'desc',
    });
  });
}
