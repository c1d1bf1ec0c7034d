/**
 * Routes requests whose Host is an active custom hostname to its project: a resolver registered
 * with platform.addHostResolver (consulted by platform/routing.ts), cached for a few seconds per
 * hostname in each process; changes are visible at once in the process that made them and, through
 * the platform's cluster invalidation (platform/cluster-events.ts), in the others.
 */
import type { Platform } from '../../platform/platform.js';
import { activeRefForHostname } from './hostname-store.js';

const TTL_MS = 3_000;

export class HostnameRouter {
  private readonly cache = new Map<string, { ref: string | undefined; expires: number }>();

  constructor(private readonly platform: Platform) {}

  async resolve(host: string): Promise<string | undefined> {
    const hit = this.cache.get(host);
    if (hit && hit.expires > Date.now()) return hit.ref;
    const ref = await activeRefForHostname(this.platform, host);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(host, { ref, expires: Date.now() + TTL_MS });
    return ref;
  }

  forget(host: string): void {
    this.cache.delete(host);
  }

  clear(): void {
    this.cache.clear();
  }
}

/**
 * The platform's custom hostname router, registered with the platform as its Host → project
 * resolver and told of other processes' changes. Built once per platform (management/services.ts).
 */
export function startHostnameRouting(platform: Platform): HostnameRouter {
  const router = new HostnameRouter(platform);
  platform.addHostResolver((host) => router.resolve(host));
  platform.events.subscribe((e) => {
    if (!e) router.clear();
    else if (e.kind === 'hostname' && e.key) router.forget(e.key);
  });
  return router;
}
