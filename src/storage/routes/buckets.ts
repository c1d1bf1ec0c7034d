/** The /bucket routes: list, get, create, update, empty, delete. */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isServiceRole, requireCaller } from '../auth.js';
import { errors } from '../errors.js';
import { assertBucketName, assertNewBucketName } from '../keys.js';
import { checkBucketLimit, parseAllowedMimeTypes, parseFileSizeLimit } from '../limits.js';
import {
  bucketJson,
  createBucket,
  deleteBucket,
  getBucket,
  listBuckets,
  updateBucket,
} from '../service/buckets.js';
import { emptyBucket } from '../service/objects.js';
import { scopeOf, type StorageDeps } from './context.js';
import { ListCount, StringEnum } from './schemas.js';

const EMPTY_BUCKET_MAX = 200_000;

/**
 * Route schemas (Fastify's Ajv words their errors). `file_size_limit` is checked in code: a number
 * or a "5MB"-style string, parsed by limits.ts.
 */
const AllowedMimeTypes = Type.Array(Type.String(), { nullable: true });
const CreateBody = Type.Object({
  name: Type.String(),
  id: Type.Optional(Type.String({ nullable: true })),
  public: Type.Optional(Type.Boolean()),
  file_size_limit: Type.Optional(Type.Unknown()),
  allowed_mime_types: Type.Optional(AllowedMimeTypes),
});
const UpdateBody = Type.Object({
  public: Type.Optional(Type.Boolean()),
  file_size_limit: Type.Optional(Type.Unknown()),
  allowed_mime_types: Type.Optional(AllowedMimeTypes),
});
const ListQuery = Type.Object({
  limit: Type.Optional(ListCount(1)),
  offset: Type.Optional(ListCount(0)),
  search: Type.Optional(Type.String()),
  sortColumn: Type.Optional(StringEnum(['id', 'name', 'created_at', 'updated_at'])),
  sortOrder: Type.Optional(StringEnum(['asc', 'desc'])),
});

/** Old Python clients do not know the `type` field. */
function clientWantsType(headers: Record<string, unknown>): boolean {
  const ua = String(headers['user-agent'] ?? '');
  const info = String(headers['x-client-info'] ?? '');
  const older = (v: string, than: number[]) => {
    const parts = v.split('.').map(Number);
    for (const [i, t] of than.entries()) {
      const part = parts[i] ?? 0;
      if (part !== t) return part < t;
    }
    return false;
  };
  const v1 = /supabase-py\/storage3 v?(\d+\.\d+\.\d+)/.exec(ua)?.[1];
  if (v1 !== undefined && older(v1, [0, 12, 1])) return false;
  const v2 = /supabase-py\/(\d+\.\d+\.\d+)/.exec(info)?.[1];
  if (v2 !== undefined && older(v2, [2, 18, 0])) return false;
  return true;
}

export async function bucketRoutes(app: FastifyInstance, deps: StorageDeps): Promise<void> {
  const create = async (req: FastifyRequest<{ Body: Static<typeof CreateBody> }>) => {
    const { project, globalLimit } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    const body = req.body;
    const name = body.name;
    const id = body.id ?? name;
    assertNewBucketName(name);
    assertNewBucketName(id);
    const fileSizeLimit = parseFileSizeLimit(body.file_size_limit);
    checkBucketLimit(fileSizeLimit, globalLimit);
    const allowedMimeTypes = parseAllowedMimeTypes(body.allowed_mime_types);
    await createBucket(project, caller, {
      id,
      name,
      public: body.public === true,
      fileSizeLimit,
      allowedMimeTypes,
    });
    return { name };
  };
  const createOpts = { schema: { body: CreateBody } };
  app.post('/bucket', createOpts, create);
  app.post('/bucket/', createOpts, create);

  const list = async (req: FastifyRequest<{ Querystring: Static<typeof ListQuery> }>) => {
    const { project } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    const rows = await listBuckets(project, caller, req.query);
    const withType = clientWantsType(req.headers);
    return rows.map((r) => bucketJson(r, withType));
  };
  const listOpts = { schema: { querystring: ListQuery } };
  app.get('/bucket', listOpts, list);
  app.get('/bucket/', listOpts, list);

  app.get<{ Params: { id: string } }>('/bucket/:id', async (req) => {
    const { project } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    return bucketJson(await getBucket(project, caller, req.params.id), false);
  });

  app.put<{ Params: { id: string }; Body: Static<typeof UpdateBody> }>(
    '/bucket/:id',
    { schema: { body: UpdateBody } },
    async (req) => {
      const { project, globalLimit } = scopeOf(deps, req);
      const caller = await requireCaller(req, project);
      assertBucketName(req.params.id);
      const body = req.body;
      // One of the three is required; JSON Schema can say so only with a longer message (anyOf).
      if (!('public' in body) && !('file_size_limit' in body) && !('allowed_mime_types' in body)) {
        throw errors.invalidRequest("body must have required property 'public'");
      }
      const changes: Parameters<typeof updateBucket>[3] = {};
      if (body.public !== undefined) changes.public = body.public;
      if ('file_size_limit' in body && body.file_size_limit !== undefined) {
        changes.fileSizeLimit = parseFileSizeLimit(body.file_size_limit);
        checkBucketLimit(changes.fileSizeLimit, globalLimit);
      }
      if ('allowed_mime_types' in body && body.allowed_mime_types !== undefined)
        changes.allowedMimeTypes = parseAllowedMimeTypes(body.allowed_mime_types);
      await updateBucket(project, caller, req.params.id, changes);
      return { message: 'Successfully updated' };
    },
  );

  app.post<{ Params: { id: string } }>('/bucket/:id/empty', async (req) => {
    const { project, backend } = scopeOf(deps, req);
    let caller: Awaited<ReturnType<typeof requireCaller>>;
    try {
      caller = await requireCaller(req, project);
    } catch {
      throw errors.serviceRoleOnly('Access denied: JWT is not authenticated');
    }
    if (!isServiceRole(caller)) throw errors.serviceRoleOnly('Access denied: Invalid role');
    const removed = await emptyBucket(project, caller, req.params.id, EMPTY_BUCKET_MAX);
    await backend.delete(
      removed.flatMap((r) => (r.version ? [{ bucket: r.bucket_id, key: r.name, version: r.version }] : [])),
    );
    return { message: 'Empty bucket has been queued. Completion may take up to an hour.' };
  });

  app.delete<{ Params: { id: string } }>('/bucket/:id', async (req) => {
    const { project } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    await deleteBucket(project, caller, req.params.id);
    return { message: 'Successfully deleted' };
  });
}
