import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FunctionsRuntimeAccess } from '../../functions/runtime-access.js';
import type { Platform } from '../../platform/platform.js';
import type { ManagementServices } from '../services.js';

/**
 * A group of management routes, registered inside the `/v1` scope by src/management/index.ts.
 * Route schemas are TypeBox (./schemas.ts), so handlers see typed `req.body` / `req.params`.
 * `functions` is the server's functions runtime, for the routes that need it (deploy, logs).
 */
export type ManagementModule = FastifyPluginAsyncTypebox<ManagementOptions>;

/**
 * What each management module is given: the platform, the services built once for it
 * (../services.ts), and the server's functions runtime (deploy checks, logs).
 */
export interface ManagementOptions {
  platform: Platform;
  services: ManagementServices;
  functions: FunctionsRuntimeAccess;
}
