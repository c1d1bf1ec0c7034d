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

  // Callback hooks that return at once for the other APIs (they run on every request; async hooks
  // cost a promise each): the ban lookups and bookkeeping stay asynchronous.
  app.addHook('onRequest', (req, reply, done) => {
    const api = projectApi(req);
    const project = req.project;
    if (!api || !project) return done();
    const ip = normalizeIp(req.ip);
    if (!ip || !isBannable(ip)) return done();
    bans.isBanned(project.ref, ip).then((banned) => {
      if (!banned) return done();
      const body =
        api === 'storage'
          ? { statusCode: '403', error: 'Forbidden', code: 'AccessDenied', message: BANNED_MESSAGE }
          : { message: BANNED_MESSAGE };
      reply.code(403).send(body);
    }, done);
  });

  app.addHook('onSend', (req, reply, payload, done) => {
    const api = projectApi(req);
    const project = req.project;
    if (!api || !project) return done(null, payload);
    const failed =
      reply.statusCode === 401 || (api === 'storage' && isStorageAuthFailure(reply.statusCode, payload));
    if (!failed) return done(null, payload);
    const ip = normalizeIp(req.ip);
    if (!ip || !isBannable(ip)) return done(null, payload);
    // Counted before the reply leaves, so the next request from this IP already sees the ban.
    bans.recordFailure(project.ref, ip).then(
      (banned) => {
        if (banned) log(`network ban: ${ip} banned on project ${project.ref}`);
        done(null, payload);
      },
      (err: unknown) => {
        log(`network ban bookkeeping failed: ${err instanceof Error ? err.message : String(err)}`);
        done(null, payload);
      },
    );
  });
}
