/**
 * Gateway hooks that apply network bans to project API requests (403 for banned client IPs) and
 * count failed authentications. PLACEHOLDER until network bans land.
 */
import type { FastifyInstance } from 'fastify';
import type { Platform } from './platform.js';

export function registerNetworkGuard(_app: FastifyInstance, _platform: Platform): void {}
