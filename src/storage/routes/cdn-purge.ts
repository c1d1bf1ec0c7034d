/**
 * CDN cache purge, as upstream's `/cdn` routes: `DELETE /cdn` (the whole project), `/cdn/{bucket}`,
 * `/cdn/{bucket}/{path}`, each with `?transformations=true` for the rendered variants only. Service
 * role only. Strata keeps no CDN itself: the request is forwarded to the purge endpoint the operator
 * configured (STRATA_STORAGE_CDN_PURGE_URL, `POST <url>/purge`, upstream's body), so a CDN in front
 * of Strata can drop what it cached.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isServiceRole, requireCaller } from '../auth.js';
import { errors } from '../errors.js';
import { assertBucketName, assertKey } from '../keys.js';
import { type StorageDeps, scopeOf } from './context.js';

const PURGE_TIMEOUT_MS = 10_000;

type PurgeTarget = { bucket?: string; objectName?: string };

/** `<url>/purge`, or undefined when the configured URL is not an http(s) URL. */
function purgeUrl(base: string): string | undefined {
  try {
    const url = new URL(base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    url.pathname = url.pathname.endsWith('/') ? `${url.pathname}purge` : `${url.pathname}/purge`;
    url.search = '';
    url.hash = '';
    return url.toString();
  } catch {
    return undefined;
  }
}

function wantsTransformations(req: FastifyRequest): boolean {
  const v = (req.query as Record<string, unknown> | undefined)?.transformations;
  if (v === undefined || v === 'false') return false;
  if (v === 'true' || v === '') return true;
  throw errors.invalidRequest('querystring/transformations must be boolean');
}

export async function cdnPurgeRoutes(app: FastifyInstance, deps: StorageDeps): Promise<void> {
  const purge = async (req: FastifyRequest, target: PurgeTarget) => {
    const { project } = scopeOf(deps, req);
    let caller: Awaited<ReturnType<typeof requireCaller>>;
    try {
      caller = await requireCaller(req, project);
    } catch {
      throw errors.serviceRoleOnly('Access denied: JWT is not authenticated');
    }
    if (!isServiceRole(caller)) throw errors.serviceRoleOnly('Access denied: Invalid role');
    if (target.bucket !== undefined) assertBucketName(target.bucket);
    if (target.objectName !== undefined) assertKey(target.objectName);
    const transforms = wantsTransformations(req);
    const cfg = deps.platform.config.storageCdnPurge;
    const url = cfg && purgeUrl(cfg.url);
    if (!cfg || !url) throw errors.cdnPurgeNotConfigured();
    const scope =
      target.objectName !== undefined ? 'object' : target.bucket !== undefined ? 'bucket' : 'tenant';
    const body: Record<string, unknown> = {
      type: transforms ? `${scope}-transforms` : scope,
      tenant: { ref: project.ref },
      ...(target.bucket !== undefined ? { bucketId: target.bucket } : {}),
      ...(target.objectName !== undefined ? { objectName: target.objectName } : {}),
    };
    let ok = false;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(cfg.key ? { authorization: `Bearer ${cfg.key}` } : {}),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(PURGE_TIMEOUT_MS),
      });
      ok = res.ok;
      await res.body?.cancel().catch(() => {});
    } catch (err) {
      req.log.warn({ status: (err as Error).name }, 'CDN purge endpoint did not answer');
    }
    if (!ok) throw errors.cdnPurgeFailed();
    return { message: 'success' };
  };

  app.delete('/cdn', (req) => purge(req, {}));
  app.delete('/cdn/', (req) => purge(req, {}));
  app.delete<{ Params: { bucket: string } }>('/cdn/:bucket', (req) =>
    purge(req, { bucket: req.params.bucket }),
  );
  app.delete<{ Params: { bucket: string; '*': string } }>('/cdn/:bucket/*', (req) => {
    const objectName = req.params['*'];
    // `/cdn/{bucket}/` with nothing after it names the bucket, as the router's wildcard allows.
    return purge(
      req,
      objectName === '' ? { bucket: req.params.bucket } : { bucket: req.params.bucket, objectName },
    );
  });
}
