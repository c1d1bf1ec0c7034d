/**
 * Reads: downloads (S8 optional auth, S12 authenticated, S20 public) and info (S18, S21 and the
 * /object/info/{bucket} alias), each with its HEAD form answered from the row alone.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isServiceRole, optionalCaller, requireCaller, type Caller } from '../auth.js';
import { errors } from '../errors.js';
import { assertKey } from '../keys.js';
import type { ObjectRow } from '../database/index.js';
import { findWithBucket, requireObject } from '../service/objects.js';
import { renderObject } from './render.js';
import { objectParams, scopeOf, type RequestScope, type StorageDeps } from './context.js';
import { OPERATIONS, type Operation } from '../operations.js';

type Access = 'optional' | 'authenticated' | 'public';

/**
 * The row under the route's access rule: public buckets are read bypassing RLS; private buckets
 * need an authenticated caller and RLS SELECT; anonymous callers reach only public buckets.
 */
async function readRow(
  scope: RequestScope,
  req: FastifyRequest,
  access: Access,
  operation: Operation,
): Promise<ObjectRow> {
  const { bucket, key } = objectParams(req);
  let caller: Caller | undefined;
  if (access === 'authenticated') caller = await requireCaller(req, scope.project);
  else if (access === 'optional') {
    const o = await optionalCaller(req, scope.project);
    if (o.authenticated) caller = o.caller;
  }
  assertKey(key);
  // One read bypassing RLS answers public buckets and the service role; private buckets are then
  // read again as the caller, so RLS decides.
  const found = await findWithBucket(scope.project, operation, bucket, key);
  if (found.isPublic || (caller && isServiceRole(caller))) {
    if (!found.row) throw errors.noSuchKey();
    return found.row;
  }
  if (!caller) throw errors.noSuchBucket();
  return requireObject(scope.project, caller, operation, bucket, key);
}

/** The info reply (S18): system metadata flattened, user metadata as `metadata`. */
export function infoJson(r: ObjectRow): Record<string, unknown> {
  const m = r.metadata;
  return {
    id: r.id,
    name: r.name,
    version: r.version,
    bucket_id: r.bucket_id,
    size: m?.size ?? null,
    content_type: m?.mimetype ?? null,
    cache_control: m?.cacheControl ?? null,
    etag: m?.eTag ?? null,
    metadata: r.user_metadata,
    last_modified: r.updated_at,
    created_at: r.created_at,
  };
}

function sendInfo(
  req: FastifyRequest,
  reply: FastifyReply,
  r: ObjectRow,
): FastifyReply | Record<string, unknown> {
  const m = r.metadata;
  if (m?.eTag) reply.header('etag', m.eTag);
  reply.header('last-modified', new Date(r.updated_at).toUTCString());
  if (m?.cacheControl) reply.header('cache-control', m.cacheControl);
  if (req.method === 'HEAD') return reply.code(200).send();
  return infoJson(r);
}

export async function objectReadRoutes(app: FastifyInstance, deps: StorageDeps): Promise<void> {
  const download =
    (access: Access, operation: Operation) => async (req: FastifyRequest, reply: FastifyReply) => {
      const scope = scopeOf(deps, req);
      const row = await readRow(scope, req, access, operation);
      return renderObject(req, reply, scope.backend, row, {
        reload: () => readRow(scope, req, access, operation),
      });
    };
  const info = (access: Access, operation: Operation) => async (req: FastifyRequest, reply: FastifyReply) => {
    const scope = scopeOf(deps, req);
    return sendInfo(req, reply, await readRow(scope, req, access, operation));
  };
  const both = (path: string, handler: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>) => {
    app.route({ method: ['GET', 'HEAD'], url: path, handler, exposeHeadRoute: false });
  };
  both('/object/authenticated/:bucket/*', download('authenticated', OPERATIONS.GET_AUTH_OBJECT));
  both('/object/public/:bucket/*', download('public', OPERATIONS.GET_PUBLIC_OBJECT));
  both('/object/info/authenticated/:bucket/*', info('authenticated', OPERATIONS.INFO_AUTH_OBJECT));
  both('/object/info/public/:bucket/*', info('public', OPERATIONS.INFO_PUBLIC_OBJECT));
  both('/object/info/:bucket/*', info('optional', OPERATIONS.GET_AUTH_OBJECT_INFO));
  both('/object/:bucket/*', download('optional', OPERATIONS.GET_AUTH_OBJECT));
}
