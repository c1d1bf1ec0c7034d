/**
 * Edge Functions on the platform's server: the runtime (Deno workers under
 * {dataDir}/functions), the catalog the Management API invalidates, and the invocation routes.
 * The runtime's workers are all killed when the server closes.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../platform/platform.js';
import { denoBinary } from './deno-binary.js';
import { FunctionCatalog } from './function-catalog.js';
import { FunctionLogs } from './function-logs.js';
import { functionsInvokeRoutes } from './invoke-route.js';
import { registerFunctionCatalog } from './registry.js';
import { FunctionsRuntime } from './runtime.js';

export async function registerFunctions(app: FastifyInstance, platform: Platform): Promise<void> {
  const config = platform.config.functions;
  const runtime = new FunctionsRuntime(
    config,
    join(platform.config.dataDir, 'functions'),
    denoBinary(config.denoBin),
    new FunctionLogs(config.logLimit, platform.pool),
  );
  const catalog = new FunctionCatalog(platform, runtime, () => {
    const a = app.server.address();
    if (!a || typeof a === 'string') return undefined;
    const host = a.address === '0.0.0.0' || a.address === '::' ? '127.0.0.1' : a.address;
    return `http://${host.includes(':') ? `[${host}]` : host}:${a.port}`;
  });
  registerFunctionCatalog(platform, catalog);
  app.addHook('onClose', async () => {
    await runtime.close();
    await runtime.logs.close();
  });
  await app.register(functionsInvokeRoutes, { platform, catalog });
}
export { sendFunctionsFrameworkError } from './invoke-route.js';
