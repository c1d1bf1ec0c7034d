/**
 * The platform's pooler address: the PostgreSQL router (pg-router.ts) wired to the platform's
 * projects, network bans and network restrictions. Started by server.ts when
 * config.poolerPort is set; a port that is taken is reported and the platform runs without it.
 */
import ipaddr from 'ipaddr.js';
import type { Platform } from './platform.js';
import { startPgRouter, type PgRouter } from './pg-router.js';
import { isBannable, normalizeIp, type NetworkBans } from './network-bans.js';
import { appliedRestriction } from './network-restriction-store.js';
import { BANNED_MESSAGE } from './network-guard.js';

/** Whether `ip` is inside the project's applied network restrictions (loopback always is, as in pg_hba.conf). */
async function allowedByRestrictions(platform: Platform, ref: string, ip: string): Promise<boolean> {
  if (!isBannable(ip)) return true;
  const cfg = await appliedRestriction(platform.pool, ref);
  if (!cfg || !ipaddr.isValid(ip)) return true;
  const addr = ipaddr.parse(ip);
  const list = addr.kind() === 'ipv4' ? (cfg.dbAllowedCidrs ?? []) : (cfg.dbAllowedCidrsV6 ?? []);
  if (list.length === 0 || list.includes(addr.kind() === 'ipv4' ? '0.0.0.0/0' : '::/0')) return true;
  return list.some((c) => {
    const range = ipaddr.parseCIDR(c);
    return range[0].kind() === addr.kind() && addr.match(range);
  });
}

export async function startPooler(
  platform: Platform,
  bans: NetworkBans,
  log: (line: string) => void,
): Promise<PgRouter | undefined> {
  const { poolerHost, poolerPort } = platform.config;
  if (poolerPort === undefined) return undefined;
  try {
    const router = await startPgRouter(poolerHost, poolerPort, {
      async resolve(ref) {
        const ctx = await platform.project(ref);
        if (!ctx) return undefined;
        const u = new URL(ctx.superuserUrl);
        return { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 5432), dbName: ctx.dbName };
      },
      async refuse(ref, rawIp) {
        const ip = normalizeIp(rawIp) ?? rawIp;
        if (isBannable(ip) && (await bans.isBanned(ref, ip))) return BANNED_MESSAGE;
        if (!(await allowedByRestrictions(platform, ref, ip)))
          return `Address not in tenant allow_list: ${ip}`;
        return undefined;
      },
      async recordAuthFailure(ref, rawIp) {
        const ip = normalizeIp(rawIp);
        if (ip && (await bans.recordFailure(ref, ip))) log(`network ban: ${ip} banned on project ${ref}`);
      },
      log,
    });
    platform.pooler = { host: router.host, port: router.port };
    return router;
  } catch (err) {
    log(
      `pooler not started on ${poolerHost}:${poolerPort} (${err instanceof Error ? err.message : String(err)}); set STRATA_POOLER_PORT to another port, or "off"`,
    );
    return undefined;
  }
}
