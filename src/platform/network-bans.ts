/**
 * Network bans: client IPs refused (403) on one project's APIs after repeated failed
 * authentications. The state lives in the platform database (tables network_auth_failures and
 * network_bans), so every API process agrees; each process caches a project's ban list briefly.
 */
import ipaddr from 'ipaddr.js';
import type { Platform } from './platform.js';

/** How long a process trusts its cached ban list before asking the database again. */
const CACHE_MS = 1_000;

/**
 * Addresses never banned: the platform host's own loopback addresses. A reverse proxy in front of
 * the platform connects from there, so banning them would ban every client behind it.
 */
const NEVER_BANNED = new Set(['127.0.0.1', '::1']);

/** The plain textual form of a client address (IPv4-mapped IPv6 becomes IPv4); undefined if not an IP. */
export function normalizeIp(ip: string | undefined): string | undefined {
  if (!ip || !ipaddr.isValid(ip)) return undefined;
  const a = ipaddr.parse(ip);
  if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress())
    return (a as ipaddr.IPv6).toIPv4Address().toString();
  return a.toString();
}

export function isBannable(ip: string): boolean {
  return !NEVER_BANNED.has(ip);
}

export class NetworkBans {
  private readonly cache = new Map<string, { ips: Set<string>; expires: number }>();
  private failuresSincePrune = 0;

  constructor(private readonly platform: Platform) {}

  /** Whether `ip` is banned on project `ref` (cached for about a second). */
  async isBanned(ref: string, ip: string): Promise<boolean> {
    return (await this.bannedSet(ref)).has(ip);
  }

  private async bannedSet(ref: string): Promise<Set<string>> {
    const hit = this.cache.get(ref);
    if (hit && hit.expires > Date.now()) return hit.ips;
    const { rows } = await this.platform.pool.query<{ ip: string }>(
      'select host(ip) as ip from network_bans where project_ref = $1',
      [ref],
    );
    const ips = new Set(rows.map((r) => r.ip));
    this.cache.set(ref, { ips, expires: Date.now() + CACHE_MS });
    return ips;
  }

  /**
   * Counts one failed authentication of `ip` on `ref` in the current window
   * (config.banWindowMs); at config.banThreshold failures the IP is banned. Returns true when this
   * call banned it.
   */
  async recordFailure(ref: string, ip: string): Promise<boolean> {
    if (!isBannable(ip)) return false;
    const { banThreshold, banWindowMs } = this.platform.config;
    const { rows } = await this.platform.pool.query<{ banned: boolean }>(
      `with counted as (
         insert into network_auth_failures as f (project_ref, ip, window_start, failures)
         values ($1, $2::inet, now(), 1)
         on conflict (project_ref, ip) do update set
           window_start = case when f.window_start < now() - make_interval(secs => $3::float8 / 1000) then now() else f.window_start end,
           failures = case when f.window_start < now() - make_interval(secs => $3::float8 / 1000) then 1 else f.failures + 1 end
         returning failures
       ), banned as (
         insert into network_bans (project_ref, ip)
         select $1, $2::inet from counted where failures >= $4
         on conflict do nothing
         returning 1
       )
       select exists (select from banned) as banned`,
      [ref, ip, banWindowMs, Math.max(1, banThreshold)],
    );
    if (++this.failuresSincePrune >= 1000) {
      // Counters whose window has passed carry no information; keep the table small.
      this.failuresSincePrune = 0;
      this.platform.pool
        .query(
          `delete from network_auth_failures where window_start < now() - make_interval(secs => $1::float8 / 1000)`,
          [banWindowMs],
        )
        .catch(() => {});
    }
    const banned = rows[0]?.banned === true;
    if (banned) {
      await this.platform.pool.query(
        'delete from network_auth_failures where project_ref = $1 and ip = $2::inet',
        [ref, ip],
      );
      this.cache.delete(ref);
    }
    return banned;
  }

  /** The banned addresses of a project, IPv4 and IPv6 apart, sorted. */
  async list(ref: string): Promise<{ v4: string[]; v6: string[] }> {
    const { rows } = await this.platform.pool.query<{ ip: string; family: number }>(
      `select host(ip) as ip, family(ip) as family from network_bans where project_ref = $1 order by ip`,
      [ref],
    );
    return {
      v4: rows.filter((r) => r.family === 4).map((r) => r.ip),
      v6: rows.filter((r) => r.family === 6).map((r) => r.ip),
    };
  }

  /** Lifts the bans of these addresses (and forgets their failure counts); returns how many were lifted. */
  async remove(ref: string, ips: string[]): Promise<number> {
    if (ips.length === 0) return 0;
    const { rowCount } = await this.platform.pool.query(
      'delete from network_bans where project_ref = $1 and ip = any($2::inet[])',
      [ref, ips],
    );
    await this.platform.pool.query(
      'delete from network_auth_failures where project_ref = $1 and ip = any($2::inet[])',
      [ref, ips],
    );
    this.cache.delete(ref);
    return rowCount ?? 0;
  }
}

const instances = new WeakMap<Platform, NetworkBans>();

/** The platform's ban tracker (one per Platform, shared by the gateway hook and the Management API). */
export function networkBans(platform: Platform): NetworkBans {
  let b = instances.get(platform);
  if (!b) {
    b = new NetworkBans(platform);
    instances.set(platform, b);
  }
  return b;
}
