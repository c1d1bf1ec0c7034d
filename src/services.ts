/**
 * What server.ts builds a platform with: the steps the other areas add to the platform's own work
 * (a project database's bootstrap, the default project's setup, a deleted project's files), and the
 * services built once per platform and handed to the areas that use them.
 */
import type { StrataConfig } from './config.js';
import { installGraphQLObjects } from './graphql/extension/bootstrap-hook.js';
import { enableIntrospectionForLocalDevelopment } from './graphql/extension/local-introspection.js';
import { createManagementServices, type ManagementServices } from './management/services.js';
import { NetworkBans } from './platform/network-bans.js';
import type { StorageProbe } from './platform/node-lifecycle.js';
import type { Platform, PlatformOptions } from './platform/platform.js';
import { removeProjectBytes } from './storage/backend/index.js';
import { s3Probe } from './storage/backend/s3-probe.js';

/** The areas' parts of a platform's start (an option given by the caller wins). */
export function platformParts(config: StrataConfig): PlatformOptions {
  return {
    projectBootstrapHooks: [installGraphQLObjects],
    defaultProjectSetup: enableIntrospectionForLocalDevelopment,
    removeProjectFiles: (ref, filesDir) => removeProjectBytes(config, ref, filesDir),
  };
}

export interface PlatformServices {
  /** Network bans: checked and counted by the gateway, the realtime server and the pooler. */
  bans: NetworkBans;
  /** The object store's health, part of GET /ready. */
  storageProbe: StorageProbe;
  management: ManagementServices;
}

export function createServices(platform: Platform): PlatformServices {
  const bans = new NetworkBans(platform.pool, platform.config);
  return {
    bans,
    storageProbe: s3Probe(platform.config),
    management: createManagementServices(platform, bans),
  };
}
