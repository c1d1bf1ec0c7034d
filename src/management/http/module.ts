import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Platform } from '../../platform/platform.js';

/**
 * A group of management routes, registered inside the `/v1` scope by src/management/index.ts.
 * Route schemas are TypeBox (./schemas.ts), so handlers see typed `req.body` / `req.params`.
 */
export type ManagementModule = FastifyPluginAsyncTypebox<{ platform: Platform }>;
