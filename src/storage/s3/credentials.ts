/**
 * S3 access keys per project (platform database, sql/platform/0030). An access key acts as the
 * service role on its project's storage, as the reference's default credential claims do. The
 * secret is generated here, shown once, and kept encrypted with the platform key (SigV4 needs it in
 * the clear to recompute signatures); a short-lived in-memory cache keeps the hot path off the
 * platform database; a key deleted through another process leaves it at once (cluster invalidation).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Platform } from '../../platform/platform.js';
import { openSecret, sealSecret } from '../../platform/secret-box.js';
import {
  type AccessKeyRow,
  deleteAccessKeyRow,
  insertAccessKey,
  selectAccessKeySecret,
  selectAccessKeys,
} from '../database/index.js';

export interface AccessKeyInfo {
  id: string;
  description: string;
  access_key: string;
  created_at: string;
}

export interface NewAccessKey extends AccessKeyInfo {
  secret_key: string;
}

const aad = (ref: string, accessKey: string) => `storage_s3_access_keys:${ref}:${accessKey}`;
const CACHE_MS = 30_000;
const cache = new Map<string, { ref: string; secret: string; at: number }>();

function infoOf(r: AccessKeyRow): AccessKeyInfo {
  return {
    id: r.id,
    description: r.description,
    access_key: r.access_key_id,
    created_at: new Date(r.created_at).toISOString(),
  };
}

export async function createAccessKey(
  platform: Platform,
  ref: string,
  description: string,
): Promise<NewAccessKey> {
  const id = randomUUID();
  const accessKey = randomBytes(16).toString('hex');
  const secret = randomBytes(32).toString('hex');
  const row = await insertAccessKey(platform.pool, {
    id,
    ref,
    accessKey,
    secretEncrypted: sealSecret(platform.state.platformKey, secret, aad(ref, accessKey)),
    description,
  });
  return { ...infoOf(row), secret_key: secret };
}

export async function listAccessKeys(platform: Platform, ref: string): Promise<AccessKeyInfo[]> {
  return (await selectAccessKeys(platform.pool, ref)).map(infoOf);
}

const listening = new WeakSet<Platform>();

/** Keys deleted through another process leave this process's cache at once (cluster-events.ts). */
function listenForDeletions(platform: Platform): void {
  if (listening.has(platform)) return;
  listening.add(platform);
  platform.events.subscribe((e) => {
    if (!e) cache.clear();
    else if (e.kind === 's3-key' && e.key) cache.delete(e.key);
  });
}

/** True when a key was deleted. */
export async function deleteAccessKey(platform: Platform, ref: string, id: string): Promise<boolean> {
  const deleted = await deleteAccessKeyRow(platform.pool, ref, id);
  for (const key of deleted) {
    cache.delete(key);
    await platform.events.publish({ kind: 's3-key', ref, key });
  }
  return deleted.length > 0;
}

/** The secret of a project's access key, or undefined when the project has no such key. */
export async function accessKeySecret(
  platform: Platform,
  ref: string,
  accessKey: string,
): Promise<string | undefined> {
  listenForDeletions(platform);
  const hit = cache.get(accessKey);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.ref === ref ? hit.secret : undefined;
  const row = await selectAccessKeySecret(platform.pool, accessKey);
  if (!row) {
    cache.delete(accessKey);
    return undefined;
  }
  const secret = openSecret(
    platform.state.platformKey,
    row.secret_encrypted,
    aad(row.project_ref, accessKey),
  );
  cache.set(accessKey, { ref: row.project_ref, secret, at: Date.now() });
  return row.project_ref === ref ? secret : undefined;
}
