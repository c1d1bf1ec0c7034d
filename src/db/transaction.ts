import type pg from 'pg';

/**
 * Runs `work` in one transaction on a client of `pool`: commit on success, rollback on error.
 * `opening` is the message that starts it (`begin`, or `begin; set local role ...` for the API).
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  opening = 'begin',
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(opening);
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (err) {
    await client.query('rollback').catch((e: Error) => (broken = e));
    throw err;
  } finally {
    client.release(broken);
  }
}
