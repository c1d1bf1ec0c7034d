import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Platform } from '../../platform/platform.js';
import type { ManagementServices } from '../services.js';

/**
 * A group of management routes, registered inside the `/v1` scope by src/management/index.ts.
 * Route schemas are TypeBox (./schemas.ts), so handlers see typed `req.body` / `req.params`.
 */
export type ManagementModule = FastifyPluginAsyncTypebox<ManagementOptions>;

/** What each management module is given: the platform, and the services built once for it (../services.ts). */
export interface ManagementOptions {
  platform: Platform;
  services: ManagementServices;
}
