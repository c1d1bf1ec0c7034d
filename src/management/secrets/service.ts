/**
 * Project secrets as the Management API shows and changes them: only SHA-256 digests (the
 * managed SUPABASE_* ones included), writes through the secrets store
 * (platform/project-secrets.ts), and every change announced to the functions runtime (running
 * workers have the old environment: platform/function-events.ts).
 */
import type { Platform } from '../../platform/platform.js';
import type { ProjectContext } from '../../platform/project-context.js';
import {
  listSecretDigests,
  managedSecrets,
  removeProjectSecrets,
  storeProjectSecrets,
} from '../../platform/project-secrets.js';
import { sha256Hex } from '../../platform/sha256.js';

export const RESERVED_PREFIX = 'SUPABASE_';

export interface SecretResponse {
  name: string;
  /** SHA-256 hex digest of the value. */
  value: string;
  updated_at: string;
}

export async function listSecrets(
  platform: Platform,
  ctx: ProjectContext,
  apiUrl: string,
): Promise<SecretResponse[]> {
  const out: SecretResponse[] = (await listSecretDigests(platform.pool, ctx.ref)).map((s) => ({
    name: s.name,
    value: s.sha256,
    updated_at: s.updatedAt.toISOString(),
  }));
  for (const [name, value] of Object.entries(managedSecrets(ctx, apiUrl)))
    out.push({ name, value: sha256Hex(value), updated_at: ctx.createdAt });
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Creates or overwrites; one transaction. */
export async function upsertSecrets(
  platform: Platform,
  ref: string,
  secrets: Array<{ name: string; value: string }>,
): Promise<void> {
  await storeProjectSecrets(platform.pool, platform.state.platformKey, ref, secrets);
  platform.functionEvents.announceChange(ref);
}

/** Deletes the named secrets; names that do not exist are ignored. */
export async function deleteSecrets(platform: Platform, ref: string, names: string[]): Promise<void> {
  await removeProjectSecrets(platform.pool, ref, names);
  platform.functionEvents.announceChange(ref);
}
