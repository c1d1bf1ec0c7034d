/**
 * Project secrets (the Edge Functions environment) in the platform database, table
 * project_secrets: encrypted at rest with the platform key, with the SHA-256 digest of each value
 * beside it. The Management API writes them and shows only the digests
 * (management/secrets/service.ts); `readProjectSecrets` gives the plaintext to the functions
 * runtime (functions/runtime-config.ts), never to an HTTP caller.
 */
import type pg from 'pg';
import { withTransaction } from '../db/transaction.js';
import type { ProjectContext } from './project-context.js';
import { openSecret, sealSecret } from './secret-box.js';
import { sha256Hex } from './sha256.js';

export interface SecretDigest {
  name: string;
  /** SHA-256 hex digest of the value. */
  sha256: string;
  updatedAt: Date;
}

/** What binds a ciphertext to its row (AES-GCM associated data). */
const aad = (ref: string, name: string) => `project_secrets:${ref}:${name}`;

/**
 * The platform-managed variables every project has: URL and keys. (SUPABASE_DB_URL, the project's
 * functions login, is put into function workers' environment only: see functions/function-catalog.ts.)
 */
export function managedSecrets(ctx: ProjectContext, apiUrl: string): Record<string, string> {
  return {
    SUPABASE_URL: apiUrl,
    SUPABASE_ANON_KEY: ctx.anonKey,
    SUPABASE_SERVICE_ROLE_KEY: ctx.serviceRoleKey,
  };
}

/** The user's secrets (managed ones are not stored), as digests. */
export async function listSecretDigests(pool: pg.Pool, ref: string): Promise<SecretDigest[]> {
  const { rows } = await pool.query<{ name: string; value_sha256: string; updated_at: Date }>(
    'select name, value_sha256, updated_at from project_secrets where project_ref = $1',
    [ref],
  );
  return rows.map((r) => ({ name: r.name, sha256: r.value_sha256, updatedAt: new Date(r.updated_at) }));
}

/** Creates or overwrites (the last value of a name given twice wins); one transaction. */
export async function storeProjectSecrets(
  pool: pg.Pool,
  platformKey: string,
  ref: string,
  secrets: Array<{ name: string; value: string }>,
): Promise<void> {
  const last = new Map(secrets.map((s) => [s.name, s.value]));
  await withTransaction(pool, async (client) => {
    for (const [name, value] of last) {
      await client.query(
        `insert into project_secrets (project_ref, name, value_encrypted, value_sha256) values ($1, $2, $3, $4)
         on conflict (project_ref, name) do update
           set value_encrypted = excluded.value_encrypted, value_sha256 = excluded.value_sha256, updated_at = now()`,
        [ref, name, sealSecret(platformKey, value, aad(ref, name)), sha256Hex(value)],
      );
    }
  });
}

/** Deletes the named secrets; names that do not exist are ignored. */
export async function removeProjectSecrets(pool: pg.Pool, ref: string, names: string[]): Promise<void> {
  await pool.query('delete from project_secrets where project_ref = $1 and name = any($2::text[])', [
    ref,
    names,
  ]);
}

/** Plaintext of the user's secrets (for the functions runtime); managed ones are not included. */
export async function readProjectSecrets(
  pool: pg.Pool,
  platformKey: string,
  ref: string,
): Promise<Record<string, string>> {
  const { rows } = await pool.query<{ name: string; value_encrypted: Buffer }>(
    'select name, value_encrypted from project_secrets where project_ref = $1 order by name',
    [ref],
  );
  const out: Record<string, string> = {};
  for (const r of rows) out[r.name] = openSecret(platformKey, r.value_encrypted, aad(ref, r.name));
  return out;
}

/** Every secret of a removed project. */
export async function removeAllProjectSecrets(pool: pg.Pool, ref: string): Promise<void> {
  await pool.query('delete from project_secrets where project_ref = $1', [ref]);
}
