/**
 * SQL of the resumable-upload locks (tus/pg-locker.ts): a session advisory lock per upload id,
 * taken and released on the same dedicated connection.
 */
import type pg from 'pg';

const lockName = (uploadId: string) => `storage.tus:${uploadId}`;

/** Takes the upload's lock for this session if free; false when another session holds it. */
export async function tryLockUpload(client: pg.ClientBase, uploadId: string): Promise<boolean> {
  const r = await client.query<{ ok: boolean }>(
    'select pg_try_advisory_lock(hashtextextended($1, 0)) as ok',
    [lockName(uploadId)],
  );
  return r.rows[0]?.ok === true;
}

export async function unlockUpload(client: pg.ClientBase, uploadId: string): Promise<void> {
  await client.query('select pg_advisory_unlock(hashtextextended($1, 0))', [lockName(uploadId)]);
}
