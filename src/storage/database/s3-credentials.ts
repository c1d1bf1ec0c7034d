/**
 * SQL of the S3 access keys (platform database table storage_s3_access_keys, sql/platform/0030).
 * These run on the platform pool given (s3/credentials.ts), not on a project's database.
 */
import type { Queryable } from './tx.js';

/** The columns both the insert and the listing return. */
export interface AccessKeyRow {
  id: string;
  description: string;
  access_key_id: string;
  created_at: Date;
}
const ROW_COLUMNS = 'id, description, access_key_id, created_at';

export interface AccessKeyInsert {
  id: string;
  ref: string;
  accessKey: string;
  secretEncrypted: Buffer;
  description: string;
}

export async function insertAccessKey(db: Queryable, k: AccessKeyInsert): Promise<AccessKeyRow> {
  const { rows } = await db.query<AccessKeyRow>(
    `insert into storage_s3_access_keys (id, project_ref, access_key_id, secret_encrypted, description)
     values ($1, $2, $3, $4, $5) returning ${ROW_COLUMNS}`,
    [k.id, k.ref, k.accessKey, k.secretEncrypted, k.description],
  );
  const row = rows[0];
  if (!row) throw new Error('access key insert returned no row');
  return row;
}

export async function selectAccessKeys(db: Queryable, ref: string): Promise<AccessKeyRow[]> {
  const { rows } = await db.query<AccessKeyRow>(
    `select ${ROW_COLUMNS} from storage_s3_access_keys
     where project_ref = $1 order by created_at, id`,
    [ref],
  );
  return rows;
}

/** Deletes the project's key `id`; returns the access key ids deleted (none or one). */
export async function deleteAccessKeyRow(db: Queryable, ref: string, id: string): Promise<string[]> {
  const { rows } = await db.query<{ access_key_id: string }>(
    'delete from storage_s3_access_keys where project_ref = $1 and id = $2 returning access_key_id',
    [ref, id],
  );
  return rows.map((r) => r.access_key_id);
}

/** The project and sealed secret of an access key, in any project. */
export async function selectAccessKeySecret(
  db: Queryable,
  accessKey: string,
): Promise<{ project_ref: string; secret_encrypted: Buffer } | undefined> {
  const { rows } = await db.query<{ project_ref: string; secret_encrypted: Buffer }>(
    'select project_ref, secret_encrypted from storage_s3_access_keys where access_key_id = $1',
    [accessKey],
  );
  return rows[0];
}
