import type pg from 'pg';
import { withPooledClient } from './pooled-client.js';

/**
 * Runs `work` in one transaction on a client of `pool`: commit on success, rollback on error
 * (withPooledClient rolls back whatever is left open and destroys a client it cannot reset).
 * `opening` is the message that starts it (`begin`, or `begin; set local role ...` for the API).
 */
export function withTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  opening = 'begin',
): Promise<T> {
  return withPooledClient(pool, async (client) => {
    await client.query(opening);
    const result = await work(client);
    await client.query('commit');
    return result;
  });
}
