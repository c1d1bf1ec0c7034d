/**
 * Resumable uploads (TUS 1.0) at `/upload/resumable` and `/upload/resumable/sign`, served by
 * @tus/server as the reference does (supabase/storage src/http/routes/tus): creation,
 * creation-with-upload, creation-defer-length, termination, expiration; HEAD gives the durable
 * offset, PATCH appends. `Upload-Metadata` carries bucketName, objectName, contentType,
 * cacheControl and metadata (JSON). The caller's token (or, on /sign, the `x-signature` token of
 * createSignedUploadUrl) is checked on every request; the RLS dry run and the bucket limits run at
 * creation and on every PATCH, and the completed upload goes through the plain upload pipeline
 * (limits, RLS, commit) again, taking the stored bytes where they are. Unfinished uploads live
 * next to the file backend's files (file-store.ts) or in the S3 bucket (s3-store.ts), so on `s3`
 * any node can continue any upload. Upload ids are `<bucket>/<key>/<version>`, base64url in URLs.
 * Errors of the Storage service become TUS error replies with the logical status and the message.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Server } from '@tus/server';
import type { Upload } from '@tus/utils';
import { createPool } from '../../db/pool.js';
import type pg from 'pg';
import type { ProjectContext } from '../../platform/project-context.js';
import { SERVICE, isServiceRole, ownerUuid, requireCaller, type Caller } from '../auth.js';
import type { StorageBackend } from '../backend/interface.js';
import { StorageError, errors, fromPgError, fromSystemError } from '../errors.js';
import { assertBucketName, assertKey, isFolderPlaceholder } from '../keys.js';
import { checkMimeType, effectiveLimit } from '../limits.js';
import { hasNul } from '../nul.js';
import { bucketLimits } from '../service/buckets.js';
import { dryRunWrite } from '../service/object-writes.js';
import { uploadObject } from '../service/uploads.js';
import { verifyUrlToken } from '../signing.js';
import { scopeOf, type StorageDeps } from '../routes/context.js';
import type { TusFileStore } from './file-store.js';
import type { TusS3Store } from './s3-store.js';
import type { S3Backend } from '../backend/s3.js';
import { FileBackend } from '../backend/file.js';
import type { PgLocker } from './pg-locker.js';
import { formatUploadId, fromUrlSegment, parseUploadId, toUrlSegment } from './upload-id.js';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { OPERATIONS } from '../operations.js';

/** What the TUS hooks need about the request they serve. */
interface TusRequest {
  project: ProjectContext;
  backend: StorageBackend;
  globalLimit: number;
  signed: boolean;
  /** Upload id from the URL (HEAD, PATCH, DELETE). */
  id?: string;
  /** The verified caller (unsigned routes). */
  caller?: Caller;
  upsert: boolean;
  /** `<origin-relative base>/upload/resumable[/sign]` of this request, for Location. */
  basePath: string;
  /** Set by the signed-token check: who the upload is for, and its upsert flag. */
  signedOwner?: string;
}

const requests = new WeakMap<IncomingMessage, TusRequest>();

function contextOf(req: IncomingMessage): TusRequest {
  const ctx = requests.get(req);
  if (!ctx) throw errors.internal();
  return ctx;
}

/** Where unfinished uploads live: next to the file backend's files, or in the S3 bucket. */
type ResumableStore = TusFileStore | TusS3Store;

interface ProjectTus {
  server: Server;
  store: ResumableStore;
  lockPool: pg.Pool;
  locker: PgLocker;
}

/**
 * The tus modules (@tus/server, @tus/utils, and the AWS SDK for the S3 store) are imported by the
 * first resumable upload (or sweep), not with the server.
 */
async function storeFor(deps: StorageDeps, project: ProjectContext): Promise<ResumableStore> {
  const config = deps.platform.config;
  const backend = deps.backends.for(project);
  if (backend.kind === 's3') {
    const { TusS3Store } = await import('./s3-store.js');
    return new TusS3Store(backend as S3Backend, config.storageTusExpiryMs);
  }
  if (backend instanceof FileBackend) {
    const { TusFileStore } = await import('./file-store.js');
    return new TusFileStore(
      join(project.filesDir, 'storage', '.tus'),
      config.storageTusExpiryMs,
      config.storageFsync,
      backend,
    );
  }
  throw new Error('resumable uploads need the file or the s3 backend');
}

/** The writer, owner and upsert flag of a request (signed: from the token). */
function writerOf(ctx: TusRequest): { writer: Caller; owner: string | null; ownerId: string | null } {
  if (ctx.signed) {
    const o = ctx.signedOwner;
    return {
      writer: SERVICE,
      owner: o && ownerUuid({ ...SERVICE, sub: o }) ? o : null,
      ownerId: o ?? null,
    };
  }
  const caller = ctx.caller ?? SERVICE;
  return { writer: caller, owner: ownerUuid(caller), ownerId: caller.sub ?? null };
}

/** The RLS dry run of writing the object (or, for the service role, the existence check). */
async function canUpload(ctx: TusRequest, bucket: string, key: string): Promise<void> {
  const { writer, owner, ownerId } = writerOf(ctx);
  if (isServiceRole(writer)) {
    const b = await bucketLimits(ctx.project, bucket, key);
    if (b.keyExists && !ctx.upsert) throw errors.keyAlreadyExists();
    return;
  }
  await dryRunWrite(
    ctx.project,
    writer,
    OPERATIONS.CREATE_OBJECT,
    { bucket, key, owner, ownerId, metadata: {}, userMetadata: {}, version: null },
    ctx.upsert,
  );
}

function normaliseCacheControl(v: string | null | undefined): string {
  return v && /^-?\d+$/.test(v) ? `max-age=${v}` : 'no-cache';
}

function userMetadataOf(text: string | null | undefined): Record<string, unknown> {
  if (!text) return {};
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

async function createServer(deps: StorageDeps, project: ProjectContext): Promise<ProjectTus> {
  const [{ Server }, { EVENTS }, { PgLocker }] = await Promise.all([
    import('@tus/server'),
    import('@tus/utils'),
    import('./pg-locker.js'),
  ]);
  const store = await storeFor(deps, project);
  const lockPool = createPool(project.apiUrl, { max: 20, applicationName: `strata-${project.ref}-tus` });
  const locker = new PgLocker(lockPool, deps.platform.config.storageTusLockTimeoutMs, {
    events: deps.platform.events,
    ref: project.ref,
  });
  const server = new Server({
    path: '/upload/resumable',
    datastore: store,
    locker,
    disableTerminationForFinishedUploads: true,
    allowedHeaders: ['Authorization', 'X-Upsert', 'Upload-Expires', 'ApiKey', 'x-signature'],
    namingFunction: (req, metadata) => {
      const bucket = metadata?.bucketName;
      const key = metadata?.objectName;
      if (!metadata || !bucket || !key) throw errors.invalidRequest('Metadata header is required');
      if (hasNul(metadata)) throw errors.invalidRequest('Upload-Metadata must not contain NUL bytes');
      assertBucketName(bucket);
      assertKey(key);
      contextOf(req);
      return formatUploadId({ bucket, key, version: randomUUID() });
    },
    getFileIdFromRequest: (req) => contextOf(req).id,
    generateUrl: (req, { proto, host, id }) =>
      `${proto}://${host}${contextOf(req).basePath}/${toUrlSegment(id)}`,
    maxSize: async (req, id) => {
      const ctx = contextOf(req);
      const u = id ? parseUploadId(id) : undefined;
      if (!u) return ctx.globalLimit;
      const b = await bucketLimits(ctx.project, u.bucket);
      return effectiveLimit(ctx.globalLimit, b.fileSizeLimit, isFolderPlaceholder(u.key));
    },
    onIncomingRequest: async (req, _res, id) => {
      const ctx = contextOf(req);
      const u = parseUploadId(id);
      if (!u) throw errors.noSuchKey();
      if (ctx.signed) {
        const signature = req.headers['x-signature'];
        if (typeof signature !== 'string' || signature === '')
          throw errors.invalidSignature('Missing x-signature header');
        const claims = await verifyUrlToken(ctx.project.jwtSecret, signature, 'upload', u.bucket, u.key);
        ctx.signedOwner = claims.owner;
        ctx.upsert = claims.upsert;
      }
      if (req.method === 'HEAD' || req.method === 'OPTIONS') return;
      await canUpload(ctx, u.bucket, u.key);
    },
    onUploadCreate: async (req, res, upload) => {
      const ctx = contextOf(req);
      const u = parseUploadId(upload.id);
      if (!u) throw errors.noSuchKey();
      const b = await bucketLimits(ctx.project, u.bucket, u.key);
      const metadata = { ...(upload.metadata ?? {}) };
      metadata.cacheControl = normaliseCacheControl(metadata.cacheControl);
      if (metadata.contentType && !isFolderPlaceholder(u.key))
        checkMimeType(b.allowedMimeTypes, metadata.contentType);
      void ctx;
      return { res, metadata };
    },
    onUploadFinish: async (req, res, upload) => {
      await finish(contextOf(req), store, upload);
      return { res, headers: { 'Tus-Complete': '1' } };
    },
    onResponseError: (_req, _res, err) => {
      if (err instanceof StorageError) return { status_code: err.status, body: err.message };
      if (err instanceof Error) {
        const mapped = fromSystemError(err) ?? fromPgError(err);
        if (mapped) return { status_code: mapped.status, body: mapped.message };
        if ('status_code' in err) return undefined;
        return { status_code: 500, body: 'Internal Server Error' };
      }
      return undefined;
    },
  });
  server.on(EVENTS.POST_FINISH, (_req: IncomingMessage, _res: ServerResponse, upload: Upload) => {
    void store.forget(upload.id).catch(() => {});
  });
  return { server, store, lockPool, locker };
}

/**
 * The completed upload goes through the plain upload pipeline (limits, RLS, commit), its stored
 * bytes taken as the new version where they are. What is left of the upload goes once the reply
 * is written (POST_FINISH: the creation handler still reads the upload after this hook).
 */
async function finish(ctx: TusRequest, store: ResumableStore, upload: Upload): Promise<void> {
  const u = parseUploadId(upload.id);
  if (!u) throw errors.noSuchKey();
  const { writer, owner, ownerId } = writerOf(ctx);
  const metadata = upload.metadata ?? {};
  await uploadObject({
    project: ctx.project,
    backend: ctx.backend,
    globalLimit: ctx.globalLimit,
    writer,
    owner,
    ownerId,
    bucket: u.bucket,
    key: u.key,
    upsert: ctx.upsert,
    operation: OPERATIONS.CREATE_OBJECT,
    stored: store.stored(upload.id),
    body: async () => ({
      contentType: metadata.contentType || 'application/octet-stream',
      cacheControl: metadata.cacheControl || 'no-cache',
      userMetadata: userMetadataOf(metadata.metadata),
      declaredLength: upload.size,
    }),
  });
}

export class TusServers {
  /** One server per project, made on its first request (concurrent first requests share it). */
  private readonly byProject = new Map<string, Promise<ProjectTus>>();
  private readonly stores = new Map<string, Promise<ResumableStore>>();

  constructor(private readonly deps: StorageDeps) {}

  for(project: ProjectContext): Promise<ProjectTus> {
    let t = this.byProject.get(project.ref);
    if (!t) {
      t = createServer(this.deps, project);
      this.byProject.set(project.ref, t);
      // A failed creation is not kept: the next request tries again.
      t.catch(() => this.byProject.delete(project.ref));
    }
    return t;
  }

  /** Expired uploads (created before now - expiry) and stray files older than `before`. */
  async sweep(project: ProjectContext, before: number): Promise<number> {
    const server = this.byProject.get(project.ref);
    let store = server ? server.then((t) => t.store) : this.stores.get(project.ref);
    if (!store) {
      store = storeFor(this.deps, project);
      this.stores.set(project.ref, store);
      store.catch(() => this.stores.delete(project.ref));
    }
    const s = await store;
    return s.sweep(Date.now() - s.getExpiration(), before);
  }

  async close(): Promise<void> {
    const all = [...this.byProject.values()];
    this.byProject.clear();
    this.stores.clear();
    await Promise.all(
      all.map((t) =>
        t
          .then((x) => {
            x.locker.close();
            return x.lockPool.end();
          })
          .catch(() => {}),
      ),
    );
  }
}

export async function tusRoutes(
  app: FastifyInstance,
  opts: StorageDeps & { tus: TusServers },
): Promise<void> {
  const handle = (signed: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const scope = scopeOf(opts, req);
    const segment = (req.params as { '*'?: string })['*'] ?? '';
    const path = req.originalUrl.split('?')[0] ?? '';
    const at = path.indexOf('/upload/resumable');
    const ctx: TusRequest = {
      ...scope,
      signed,
      id: segment === '' ? undefined : fromUrlSegment(segment.replace(/\/$/, '')),
      upsert: req.headers['x-upsert'] === 'true',
      basePath: `${path.slice(0, at)}/upload/resumable${signed ? '/sign' : ''}`,
    };
    if (!signed && req.method !== 'OPTIONS') ctx.caller = await requireCaller(req, scope.project);
    const tus = await opts.tus.for(scope.project);
    requests.set(req.raw, ctx);
    reply.hijack();
    await tus.server.handle(req.raw, reply.raw as ServerResponse);
  };
  for (const signed of [false, true]) {
    const base = signed ? '/upload/resumable/sign' : '/upload/resumable';
    app.route({ method: ['POST', 'OPTIONS'], url: base, handler: handle(signed) });
    app.route({
      method: ['POST', 'PATCH', 'HEAD', 'DELETE', 'OPTIONS'],
      url: `${base}/*`,
      handler: handle(signed),
      exposeHeadRoute: false,
    });
  }
}
