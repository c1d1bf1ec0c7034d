/**
 * The project's encryption root key (GET/PUT /v1/projects/{ref}/pgsodium): 32 random bytes, hex, kept in the platform database
 * sealed with the platform key. Generated when the project is created (provisioning.ts), or on
 * first use for projects that predate it (GET pgsodium), replaced by PUT. From it the platform derives the project's vault key
 * (HKDF-SHA256, info "strata-vault-v1") and installs it into the project database's vault.key
 * (see sql/project/0200_vault.sql); the root key itself never enters the project database.
 */
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { Platform } from '../../platform/platform.js';
import { openSecret, sealSecret } from '../../platform/secret-box.js';
import { withTransaction } from '../../db/transaction.js';
import { withSuperuserSession } from '../../db/superuser-session.js';
import { deleteRootKey, insertRootKeyIfAbsent, sealedRootKey, upsertRootKey } from './root-key-store.js';

export const ROOT_KEY_MESSAGE = 'Expected a 32 byte secret, hex-encoded (64 characters).';

/** A root key as the API takes it: 32 bytes, hex-encoded. */
export const ROOT_KEY_PATTERN = '^[0-9a-fA-F]{64}$';

/** AES-GCM associated data: binds a sealed key to its project. */
const context = (ref: string) => `project_root_keys:${ref}`;

export function deriveVaultKey(rootKeyHex: string): { key: Buffer; keyId: string } {
  const key = Buffer.from(
    hkdfSync('sha256', Buffer.from(rootKeyHex, 'hex'), Buffer.alloc(0), 'strata-vault-v1', 32),
  );
  return { key, keyId: createHash('sha256').update(key).digest('hex').slice(0, 16) };
}

/**
 * Writes the vault key derived from `rootKeyHex` into the project database (superuser connection).
 * With `ifAbsent`, only when the project has none yet: a root key read from the store may be
 * older than one a concurrent PUT is installing, and must not replace it.
 */
export async function installVaultKey(
  platform: Platform,
  ref: string,
  rootKeyHex: string,
  opts: { ifAbsent?: boolean } = {},
): Promise<void> {
  const ctx = await platform.project(ref);
  if (!ctx) throw new Error(`project ${ref} not found`);
  const { key, keyId } = deriveVaultKey(rootKeyHex);
  const onConflict = opts.ifAbsent
    ? 'do nothing'
    : 'do update set key_id = excluded.key_id, key = excluded.key, updated_at = now()';
  await withSuperuserSession(ctx.superuserUrl, (c) =>
    c.query(`insert into vault.key (id, key_id, key) values (true, $1, $2) on conflict (id) ${onConflict}`, [
      keyId,
      key,
    ]),
  );
}

async function readRootKey(platform: Platform, ref: string): Promise<string | undefined> {
  const sealed = await sealedRootKey(platform.pool, ref);
  return sealed ? openSecret(platform.state.platformKey, sealed, context(ref)) : undefined;
}

/**
 * The project's root key, generated (and its vault key installed) when it has none yet. A key
 * found stored may have been stored a moment ago by another process (the creation's provisioning)
 * that has not installed its vault key yet: it is installed here too when missing, so the vault
 * works once this answers.
 */
export async function ensureRootKey(platform: Platform, ref: string): Promise<string> {
  const existing = await readRootKey(platform, ref);
  if (existing) {
    await installVaultKey(platform, ref, existing, { ifAbsent: true });
    return existing;
  }
  const fresh = randomBytes(32).toString('hex');
  const sealed = sealSecret(platform.state.platformKey, fresh, context(ref));
  if (!(await insertRootKeyIfAbsent(platform.pool, ref, sealed))) {
    // another process generated it first
    const winner = await readRootKey(platform, ref);
    if (!winner) throw new Error(`project ${ref}: another process stored a root key and then removed it`);
    await installVaultKey(platform, ref, winner, { ifAbsent: true });
    return winner;
  }
  try {
    await installVaultKey(platform, ref, fresh);
  } catch (err) {
    await deleteRootKey(platform.pool, ref).catch(() => {});
    throw err;
  }
  return fresh;
}

/**
 * Replaces the root key (lowercased) and installs the new vault key. Vault secrets encrypted under
 * the old key are no longer readable (vault.decrypted_secrets shows null for them).
 */
export async function replaceRootKey(platform: Platform, ref: string, rootKeyHex: string): Promise<string> {
  const key = rootKeyHex.toLowerCase();
  // The stored key and the installed vault key change together: rolled back if installing fails.
  await withTransaction(platform.pool, async (client) => {
    await upsertRootKey(client, ref, sealSecret(platform.state.platformKey, key, context(ref)));
    await installVaultKey(platform, ref, key);
  });
  return key;
}
