/**
 * Network bans: client IPs refused (403) on one project's APIs after repeated failed
 * authentications. The state lives in the platform database (tables network_auth_failures and
 * network_bans), so every API process agrees; each process caches a project's ban list briefly.
 */
import ipaddr from 'ipaddr.js';
import type pg from 'pg';
import {
  bannedAddresses,
  countFailure,
  forgetFailures,
  liftBans,
  listBans,
  pruneFailures,
} from './network-ban-store.js';

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

/** The ban settings of the platform's configuration. */
export interface BanSettings {
  /** Failed authentications within the window that ban an address. */
  banThreshold: number;
  banWindowMs: number;
}

/**
 * The platform's ban tracker: one per platform, built with its services (src/services.ts) and
 * shared by the gateway hook, the realtime server, the PostgreSQL router and the Management API.
 */
export class NetworkBans {
  private readonly cache = new Map<string, { ips: Set<string>; expires: number }>();
  private failuresSincePrune = 0;

  /** `db`: the platform database. */
  constructor(
    private readonly db: pg.Pool,
    private readonly settings: BanSettings,
  ) {}

  /** Whether `ip` is banned on project `ref` (cached for about a second). */
  async isBanned(ref: string, ip: string): Promise<boolean> {
    return (await this.bannedSet(ref)).has(ip);
  }

  private async bannedSet(ref: string): Promise<Set<string>> {
    const hit = this.cache.get(ref);
    if (hit && hit.expires > Date.now()) return hit.ips;
    const ips = new Set(await bannedAddresses(this.db, ref));
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
    const { banThreshold, banWindowMs } = this.settings;
    const banned = await countFailure(this.db, ref, ip, banWindowMs, Math.max(1, banThreshold));
    if (++this.failuresSincePrune >= 1000) {
      // Counters whose window has passed carry no information; keep the table small.
      this.failuresSincePrune = 0;
      pruneFailures(this.db, banWindowMs).catch(() => {});
    }
    if (banned) {
      await forgetFailures(this.db, ref, [ip]);
      this.cache.delete(ref);
    }
    return banned;
  }

  /** The banned addresses of a project, IPv4 and IPv6 apart, sorted. */
  async list(ref: string): Promise<{ v4: string[]; v6: string[] }> {
    const rows = await listBans(this.db, ref);
    return {
      v4: rows.filter((r) => r.family === 4).map((r) => r.ip),
      v6: rows.filter((r) => r.family === 6).map((r) => r.ip),
    };
  }

  /** Lifts the bans of these addresses (and forgets their failure counts); returns how many were lifted. */
  async remove(ref: string, ips: string[]): Promise<number> {
    if (ips.length === 0) return 0;
    const lifted = await liftBans(this.db, ref, ips);
    await forgetFailures(this.db, ref, ips);
    this.cache.delete(ref);
    return lifted;
  }
}
