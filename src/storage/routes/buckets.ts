/** S1–S6: /bucket routes. */
import type { FastifyInstance } from 'fastify';
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
  type ListBucketsQuery,
} from '../service/buckets.js';
import { emptyBucket } from '../service/objects.js';
import { bodyOf, requireField, scopeOf, type StorageDeps } from './context.js';

const EMPTY_BUCKET_MAX = 200_000;

function intParam(v: unknown, name: string, min: number): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n)) throw errors.invalidRequest(`querystring/${name} must be integer`);
  if (n < min) throw errors.invalidRequest(`querystring/${name} must be >= ${min}`);
  return n;
}

function listQuery(q: Record<string, unknown>): ListBucketsQuery {
  const out: ListBucketsQuery = {
    limit: intParam(q.limit, 'limit', 1),
    offset: intParam(q.offset, 'offset', 0),
  };
  if (typeof q.search === 'string') out.search = q.search;
  if (q.sortColumn !== undefined) {
    if (!['id', 'name', 'created_at', 'updated_at'].includes(String(q.sortColumn)))
      throw errors.invalidRequest('querystring/sortColumn must be equal to one of the allowed values');
    out.sortColumn = q.sortColumn as ListBucketsQuery['sortColumn'];
  }
  if (q.sortOrder !== undefined) {
    if (!['asc', 'desc'].includes(String(q.sortOrder)))
      throw errors.invalidRequest('querystring/sortOrder must be equal to one of the allowed values');
    out.sortOrder = q.sortOrder as 'asc' | 'desc';
  }
  return out;
}

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
  const create = async (req: import('fastify').FastifyRequest) => {
    const { project, globalLimit } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    const body = bodyOf(req);
    requireField(body, 'name', 'string');
    const name = body.name as string;
    const id = body.id === undefined || body.id === null ? name : body.id;
    assertNewBucketName(name);
    assertNewBucketName(id);
    if (body.public !== undefined && typeof body.public !== 'boolean')
      throw errors.invalidRequest('body/public must be boolean');
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
  app.post('/bucket', create);
  app.post('/bucket/', create);

  const list = async (req: import('fastify').FastifyRequest) => {
    const { project } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    const rows = await listBuckets(project, caller, listQuery(req.query as Record<string, unknown>));
    const withType = clientWantsType(req.headers);
    return rows.map((r) => bucketJson(r, withType));
  };
  app.get('/bucket', list);
  app.get('/bucket/', list);

  app.get<{ Params: { id: string } }>('/bucket/:id', async (req) => {
    const { project } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    return bucketJson(await getBucket(project, caller, req.params.id), false);
  });

  app.put<{ Params: { id: string } }>('/bucket/:id', async (req) => {
    const { project, globalLimit } = scopeOf(deps, req);
    const caller = await requireCaller(req, project);
    assertBucketName(req.params.id);
    const body = bodyOf(req);
    if (!('public' in body) && !('file_size_limit' in body) && !('allowed_mime_types' in body)) {
      throw errors.invalidRequest("body must have required property 'public'");
    }
    if (body.public !== undefined && typeof body.public !== 'boolean')
      throw errors.invalidRequest('body/public must be boolean');
    const changes: Parameters<typeof updateBucket>[3] = {};
    if (typeof body.public === 'boolean') changes.public = body.public;
    if ('file_size_limit' in body && body.file_size_limit !== undefined) {
      changes.fileSizeLimit = parseFileSizeLimit(body.file_size_limit);
      checkBucketLimit(changes.fileSizeLimit, globalLimit);
    }
    if ('allowed_mime_types' in body && body.allowed_mime_types !== undefined)
      changes.allowedMimeTypes = parseAllowedMimeTypes(body.allowed_mime_types);
    await updateBucket(project, caller, req.params.id, changes);
    return { message: 'Successfully updated' };
  });

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
