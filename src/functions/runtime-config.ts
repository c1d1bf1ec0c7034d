/**
 * What a function receives when it runs: its entrypoint and flags plus its environment, i.e. the
 * platform-managed variables (SUPABASE_URL, SUPABASE_ANON_KEY, SUPABASE_SERVICE_ROLE_KEY) and the
 * project's secrets (platform/project-secrets.ts), decrypted; plus SUPABASE_PUBLISHABLE_KEYS /
 * SUPABASE_SECRET_KEYS as the hosted runtime sets them (JSON `{"default": key}`), holding the anon
 * and service_role keys: the CLI 3 function template's `@supabase/server` reads them (even with
 * auth "none") and matches an `apikey` header against them as plain strings. Used by the function
 * catalog (function-catalog.ts) and served by the Management API's non-spec
 * GET /v1/projects/{ref}/functions/{function_slug}/runtime-config.
 */
import type { Platform } from '../platform/platform.js';
import type { ProjectContext } from '../platform/project-context.js';
import { managedSecrets, readProjectSecrets } from '../platform/project-secrets.js';
import type { FunctionRecord } from './function-store.js';
import { entrypointFileName } from './function-body-multipart.js';

export interface RuntimeConfig {
  slug: string;
  version: number;
  verify_jwt: boolean;
  entrypoint: string;
  body_sha256: string;
  body_content_type: string;
  env: Record<string, string>;
}

export async function runtimeConfig(
  platform: Platform,
  ctx: ProjectContext,
  apiUrl: string,
  f: FunctionRecord,
): Promise<RuntimeConfig> {
  const env = {
    ...(await readProjectSecrets(platform.pool, platform.state.platformKey, ctx.ref)),
    ...managedSecrets(ctx, apiUrl),
    SUPABASE_PUBLISHABLE_KEYS: JSON.stringify({ default: ctx.anonKey }),
    SUPABASE_SECRET_KEYS: JSON.stringify({ default: ctx.serviceRoleKey }),
  };
  return {
    slug: f.slug,
    version: f.version,
    verify_jwt: f.verifyJwt,
    entrypoint: f.entrypointPath ?? entrypointFileName(null),
    body_sha256: f.bodySha256,
    body_content_type: f.bodyContentType,
    env: Object.fromEntries(Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  };
}
