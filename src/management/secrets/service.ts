/**
 * Project secrets (the Edge Functions environment), encrypted at rest with the platform key.
 * The API shows only SHA-256 digests; `readProjectSecrets` gives the plaintext to the platform's
 * own consumers (the functions runtime), never to an HTTP caller.
 */
import type { Platform } from '../../platform/platform.js';
import { sha256Hex } from '../../platform/sha256.js';
import type { ProjectContext } from '../../platform/project-context.js';
import { openSecret, sealSecret } from '../../platform/secret-box.js';
import { withTransaction } from '../../db/transaction.js';
import { functionsChanged } from '../../functions/registry.js';

export const RESERVED_PREFIX = 'SUPABASE_';

export interface SecretResponse {
  name: string;
  /** SHA-256 hex digest of the value. */
  value: string;
  updated_at: string;
}

/** What binds a ciphertext to its row (AES-GCM associated data). */
const aad = (ref: string, name: string) => `project_secrets:${ref}:${name}`;

/**
 * The platform-managed variables every project has: URL and keys. (SUPABASE_DB_URL, the project's
 * functions login, is put into function workers' environment only: see function-catalog.ts.)
 */
export function managedSecrets(ctx: ProjectContext, apiUrl: string): Record<string, string> {
  return {
    SUPABASE_URL: apiUrl,
    SUPABASE_ANON_KEY: ctx.anonKey,
    SUPABASE_SERVICE_ROLE_KEY: ctx.serviceRoleKey,
  };
}

export async function listSecrets(
  platform: Platform,
  ctx: ProjectContext,
  apiUrl: string,
): Promise<SecretResponse[]> {
  const { rows } = await platform.pool.query<{ name: string; value_sha256: string; updated_at: Date }>(
    'select name, value_sha256, updated_at from project_secrets where project_ref = $1',
    [ctx.ref],
  );
  const out: SecretResponse[] = rows.map((r) => ({
    name: r.name,
    value: r.value_sha256,
    updated_at: new Date(r.updated_at).toISOString(),
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
  const last = new Map(secrets.map((s) => [s.name, s.value]));
  await withTransaction(platform.pool, async (client) => {
    for (const [name, value] of last) {
      await client.query(
        `insert into project_secrets (project_ref, name, value_encrypted, value_sha256) values ($1, $2, $3, $4)
         on conflict (project_ref, name) do update
           set value_encrypted = excluded.value_encrypted, value_sha256 = excluded.value_sha256, updated_at = now()`,
        [ref, name, sealSecret(platform.state.platformKey, value, aad(ref, name)), sha256Hex(value)],
      );
    }
  });
  // Running function workers have the old environment: recycle them.
  functionsChanged(platform, ref);
}

/** Deletes the named secrets; names that do not exist are ignored. */
export async function deleteSecrets(platform: Platform, ref: string, names: string[]): Promise<void> {
  await platform.pool.query('delete from project_secrets where project_ref = $1 and name = any($2::text[])', [
    ref,
    names,
  ]);
  functionsChanged(platform, ref);
}

/** Plaintext of the user's secrets (for the functions runtime); managed ones are not included. */
export async function readProjectSecrets(platform: Platform, ref: string): Promise<Record<string, string>> {
  const { rows } = await platform.pool.query<{ name: string; value_encrypted: Buffer }>(
    'select name, value_encrypted from project_secrets where project_ref = $1 order by name',
    [ref],
  );
  const out: Record<string, string> = {};
  for (const r of rows)
    out[r.name] = openSecret(platform.state.platformKey, r.value_encrypted, aad(ref, r.name));
  return out;
}
