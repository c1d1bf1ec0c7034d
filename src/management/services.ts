/**
 * The Management API's services: built once per platform (by src/services.ts, with the platform's
 * own) and given to every management module with the platform (http/module.ts).
 */
import type { NetworkBans } from '../platform/network-bans.js';
import type { Platform } from '../platform/platform.js';
import { startHostnameRouting, type HostnameRouter } from './hostnames/host-routing.js';
import { NetworkRestrictions } from './network/restrictions.js';
import { ServerVersions } from './projects/service.js';

export interface ManagementServices {
  /** The platform's network bans (listed and lifted by the network-bans routes). */
  bans: NetworkBans;
  /** Host → project for custom hostnames; its cache is told of changes. */
  hostnames: HostnameRouter;
  /** Network restrictions and each server's pg_hba.conf, written one at a time. */
  restrictions: NetworkRestrictions;
  /** Each database server's PostgreSQL version, asked once. */
  serverVersions: ServerVersions;
  /** `METHOD /v1/path` of every management route registered (tests enumerate them). */
  routeKeys: Set<string>;
}

export function createManagementServices(platform: Platform, bans: NetworkBans): ManagementServices {
  return {
    bans,
    hostnames: startHostnameRouting(platform),
    restrictions: new NetworkRestrictions(platform),
    serverVersions: new ServerVersions(platform),
    routeKeys: new Set(),
  };
}
