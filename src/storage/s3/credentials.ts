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

/** The columns both the insert and the listing return. */
interface AccessKeyRow {
  id: string;
  description: string;
  access_key_id: string;
  created_at: Date;
}
const ROW_COLUMNS = 'id, description, access_key_id, created_at';

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
  const { rows } = await platform.pool.query<AccessKeyRow>(
    `insert into storage_s3_access_keys (id, project_ref, access_key_id, secret_encrypted, description)
     values ($1, $2, $3, $4, $5) returning ${ROW_COLUMNS}`,
    [id, ref, accessKey, sealSecret(platform.state.platformKey, secret, aad(ref, accessKey)), description],
  );
  const row = rows[0];
  if (!row) throw new Error('access key insert returned no row');
  return { ...infoOf(row), secret_key: secret };
}

export async function listAccessKeys(platform: Platform, ref: string): Promise<AccessKeyInfo[]> {
  const { rows } = await platform.pool.query<AccessKeyRow>(
    `select ${ROW_COLUMNS} from storage_s3_access_keys
     where project_ref = $1 order by created_at, id`,
    [ref],
  );
  return rows.map(infoOf);
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
  const { rows } = await platform.pool.query<{ access_key_id: string }>(
    'delete from storage_s3_access_keys where project_ref = $1 and id = $2 returning access_key_id',
    [ref, id],
  );
  for (const r of rows) {
    cache.delete(r.access_key_id);
    await platform.events.publish({ kind: 's3-key', ref, key: r.access_key_id });
  }
  return rows.length > 0;
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
  const { rows } = await platform.pool.query<{ project_ref: string; secret_encrypted: Buffer }>(
    'select project_ref, secret_encrypted from storage_s3_access_keys where access_key_id = $1',
    [accessKey],
  );
  const row = rows[0];
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
