/** The Management API's rate-limit counters (table rate_limit_counters): fixed windows per key. */
import type pg from 'pg';

type Queryable = Pick<pg.ClientBase, 'query'>;

/**
 * Counts one hit on `key` in its window of `windowMs` (a window that has passed, or of another
 * length, starts again at one): the count so far and the milliseconds until the window resets.
 */
export async function countHit(
  db: Queryable,
  key: string,
  windowMs: number,
): Promise<{ count: number; resetMs: number }> {
  const { rows } = await db.query<{ count: number; reset_ms: string }>(
    `insert into rate_limit_counters as c (key, window_start, window_ms, count) values ($1, clock_timestamp(), $2, 1)
     on conflict (key) do update set
       window_start = case when c.window_start + make_interval(secs => c.window_ms / 1000.0) <= clock_timestamp() or c.window_ms <> $2
                           then clock_timestamp() else c.window_start end,
       count = case when c.window_start + make_interval(secs => c.window_ms / 1000.0) <= clock_timestamp() or c.window_ms <> $2
                    then 1 else c.count + 1 end,
       window_ms = $2
     returning count, extract(epoch from (window_start + make_interval(secs => window_ms / 1000.0) - clock_timestamp())) * 1000 as reset_ms`,
    [key, windowMs],
  );
  const [row] = rows;
  if (!row) throw new Error('the rate-limit upsert returned no row');
  return { count: row.count, resetMs: Number(row.reset_ms) };
}

/** Forgets the counters whose window ended over an hour ago. */
export async function pruneCounters(db: Queryable): Promise<void> {
  await db.query(
    `delete from rate_limit_counters where window_start + make_interval(secs => window_ms / 1000.0) < now() - interval '1 hour'`,
  );
}
