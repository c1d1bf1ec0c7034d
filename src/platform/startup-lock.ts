/**
 * Platform start-up serialised across processes: nodes of a cluster started at once would race to
 * create the platform database, migrate it and create the default project. The lock is a session
 * advisory lock on the primary server's maintenance database (the platform database may not
 * exist yet), released when `fn` ends or the session does.
 */
import { createHash } from 'node:crypto';
import { withClient } from '../db/pool.js';

const LOCK_KEY = 0x5374_7273; // 'Strs'

export async function withStartupLock<T>(
  primaryUrl: string,
  platformDatabase: string,
  fn: () => Promise<T>,
): Promise<T> {
  const ns = createHash('sha256').update(`startup:${platformDatabase}`).digest().readInt32BE(0);
  return withClient(primaryUrl, async (c) => {
    await c.query('select pg_advisory_lock($1, $2)', [LOCK_KEY, ns]);
    try {
      return await fn();
    } finally {
      await c.query('select pg_advisory_unlock($1, $2)', [LOCK_KEY, ns]).catch(() => {});
    }
  });
}
