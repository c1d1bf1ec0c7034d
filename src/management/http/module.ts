import type { FastifyInstance } from 'fastify';
import type { Platform } from '../../platform/platform.js';

/** A group of management routes, registered inside the `/v1` scope by src/management/index.ts. */
export type ManagementModule = (app: FastifyInstance, opts: { platform: Platform }) => Promise<void>;
