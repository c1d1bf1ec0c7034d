/** Management API: mounted at /v1. PLACEHOLDER until the management area lands. */
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../platform/platform.js';

export async function managementRoutes(_app: FastifyInstance, _opts: { platform: Platform }): Promise<void> {}
