/**
 * Edge Functions on the platform's server: the runtime (Deno workers under
 * {dataDir}/functions), the catalog of deployed functions it runs, and the invocation routes.
 * Built once per server by server.ts (createEdgeFunctions) and handed to the invocation routes
 * and the Management API (runtime-access.ts); the catalog hears of deploys, secret changes and
 * project removals through the platform's function events. The runtime's workers are all killed
 * when the server closes.
 */
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../platform/platform.js';
import { denoBinary } from './deno-binary.js';
import { FunctionCatalog } from './function-catalog.js';
import { FunctionLogs } from './function-logs.js';
import { checkImports } from './import-check.js';
import { functionsInvokeRoutes } from './invoke-route.js';
import type { FunctionsRuntimeAccess } from './runtime-access.js';
import { FunctionsRuntime } from './runtime.js';

export interface EdgeFunctions extends FunctionsRuntimeAccess {
  readonly runtime: FunctionsRuntime;
  readonly catalog: FunctionCatalog;
  /** Stops listening to the platform's function events and every worker; writes pending logs. */
  close(): Promise<void>;
}

/** http://host:port the server listens on, when it does (pre-started workers' SUPABASE_URL). */
function listeningUrl(server: Server): string | undefined {
  const a = server.address();
  if (!a || typeof a === 'string') return undefined;
  const host = a.address === '0.0.0.0' || a.address === '::' ? '127.0.0.1' : a.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${a.port}`;
}

/** The functions runtime and catalog of the server `server`, listening to the platform's function events. */
export function createEdgeFunctions(platform: Platform, server: Server): EdgeFunctions {
  const config = platform.config.functions;
  const runtime = new FunctionsRuntime(
    config,
    join(platform.config.dataDir, 'functions'),
    denoBinary(config.denoBin),
    new FunctionLogs(config.logLimit, platform.pool),
  );
  const catalog = new FunctionCatalog(platform, runtime, () => listeningUrl(server));
  const unsubscribe = platform.functionEvents.subscribe({
    changed: (ref, slug) => catalog.invalidate(ref, slug),
    missed: () => catalog.invalidateAll(),
    projectRemoved: (ref) => catalog.removeProject(ref),
  });
  return {
    runtime,
    catalog,
    async checkImports(bundle) {
      // The CLI template's npm imports, cached at install time, for a deploy without the network.
      await runtime.seedCache();
      await checkImports(
        runtime.denoBin,
        runtime.denoDir,
        join(runtime.rootDir, 'tmp'),
        bundle,
        runtime.moduleEnv(),
      );
    },
    readLogs: (ref, slug, limit) => runtime.logs.read(ref, slug, limit),
    async close() {
      unsubscribe();
      await runtime.close();
      await runtime.logs.close();
    },
  };
}

/** The invocation routes ({project}/functions/v1/...); `functions` are closed with the server. */
export async function registerFunctions(
  app: FastifyInstance,
  platform: Platform,
  functions: EdgeFunctions,
): Promise<void> {
  app.addHook('onClose', () => functions.close());
  await app.register(functionsInvokeRoutes, { platform, catalog: functions.catalog });
}
export { sendFunctionsFrameworkError } from './invoke-route.js';
