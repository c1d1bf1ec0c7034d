/**
 * What the Management API may ask of the functions runtime its server built (server.ts hands it
 * to the Management routes): the deploy route's import check and the logs route's read. Changes
 * (deploys, secrets, project removal) do not go through here: the Management API announces them
 * on the platform's function events (platform/function-events.ts), which the runtime listens to.
 */
import type { Bundle } from './bundle-files.js';
import type { FunctionLogEntry } from './function-logs.js';

export interface FunctionsRuntimeAccess {
  /**
   * Resolves when the bundle's module graph loads offline from the upload and the platform's Deno
   * cache; rejects with UnresolvedImportError (import-check.ts) naming what does not.
   */
  checkImports(bundle: Bundle): Promise<void>;
  /** A function's recent invocations and console output, oldest first, at most the last `limit`. */
  readLogs(ref: string, slug: string, limit?: number): Promise<FunctionLogEntry[]>;
}
