/**
 * Gateway hooks for network bans on project APIs (GraphQL /graphql/v1, Storage /storage/v1):
 * - a banned client IP gets 403 on that project's APIs;
 * - every failed authentication (HTTP 401; on Storage also its HTTP 400 carrying
 *   statusCode "403"/error "Unauthorized", Storage's invalid-token answer) counts towards a ban
 *   (config.banThreshold failures within config.banWindowMs). See network-bans.ts.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isBannable, normalizeIp, type NetworkBans } from './network-bans.js';

const PROJECT_API = /^\/(graphql\/v1|storage\/v1)(?=\/|\?|$)/;

function projectApi(req: FastifyRequest): 'graphql' | 'storage' | undefined {
  const m = PROJECT_API.exec(req.url);
  if (!m) return undefined;
  return m[1] === 'graphql/v1' ? 'graphql' : 'storage';
}

export const BANNED_MESSAGE =
  'Access denied: this IP address is banned from this project after repeated failed authentications';

/** Storage answers a bad token with HTTP 400 and the logical status in the body. */
function isStorageAuthFailure(statusCode: number, payload: unknown): boolean {
  if (statusCode !== 400) return false;
  let text: string | undefined;
  if (typeof payload === 'string') text = payload;
  else if (Buffer.isBuffer(payload)) text = payload.toString('utf8');
  if (!text || text.length > 8192) return false;
  try {
    const body = JSON.parse(text) as { statusCode?: unknown; error?: unknown };
    return String(body.statusCode) === '403' && body.error === 'Unauthorized';
  } catch {
    return false;
  }
}

export function registerNetworkGuard(app: FastifyInstance, bans: NetworkBans): void {
  const log = (msg: string) => app.log.warn(msg);

  app.addHook('onRequest', async (req, reply) => {
    const api = projectApi(req);
    const project = req.project;
    if (!api || !project) return;
    const ip = normalizeIp(req.ip);
    if (!ip || !isBannable(ip)) return;
    if (await bans.isBanned(project.ref, ip)) {
      const body =
        api === 'storage'
          ? { statusCode: '403', error: 'Forbidden', code: 'AccessDenied', message: BANNED_MESSAGE }
          : { message: BANNED_MESSAGE };
      return reply.code(403).send(body);
    }
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const api = projectApi(req);
    const project = req.project;
    if (!api || !project) return payload;
    const failed =
      reply.statusCode === 401 || (api === 'storage' && isStorageAuthFailure(reply.statusCode, payload));
    if (!failed) return payload;
    const ip = normalizeIp(req.ip);
    if (!ip || !isBannable(ip)) return payload;
    // Counted before the reply leaves, so the next request from this IP already sees the ban.
    try {
      if (await bans.recordFailure(project.ref, ip))
        log(`network ban: ${ip} banned on project ${project.ref}`);
    } catch (err) {
      log(`network ban bookkeeping failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    return payload;
  });
}
