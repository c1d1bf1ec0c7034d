/** Storage API: mounted at {project}/storage/v1. PLACEHOLDER until the storage area lands. */
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../platform/platform.js';

export async function storageRoutes(_app: FastifyInstance, _opts: { platform: Platform }): Promise<void> {}
