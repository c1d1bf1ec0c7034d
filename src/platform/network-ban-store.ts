/**
 * The network bans store: the platform database's tables network_auth_failures (failed
 * authentications counted per project, address and window) and network_bans (the banned addresses).
 */
import type pg from 'pg';

type Queryable = Pick<pg.ClientBase, 'query'>;

/** The banned addresses of project `ref`, in their plain textual form. */
export async function bannedAddresses(db: Queryable, ref: string): Promise<string[]> {
  const { rows } = await db.query<{ ip: string }>(
    'select host(ip) as ip from network_bans where project_ref = $1',
    [ref],
  );
  return rows.map((r) => r.ip);
}

/**
 * Counts one failed authentication of `ip` on `ref` in the window of `windowMs` (a window that has
 * passed starts again at one); at `threshold` failures the address is banned. True when this call
 * banned it.
 */
export async function countFailure(
  db: Queryable,
  ref: string,
  ip: string,
  windowMs: number,
  threshold: number,
): Promise<boolean> {
  const { rows } = await db.query<{ banned: boolean }>(
    `with counted as (
       insert into network_auth_failures as f (project_ref, ip, window_start, failures)
       values ($1, $2::inet, now(), 1)
       on conflict (project_ref, ip) do update set
         window_start = case when f.window_start < now() - make_interval(secs => $3::float8 / 1000) then now() else f.window_start end,
         failures = case when f.window_start < now() - make_interval(secs => $3::float8 / 1000) then 1 else f.failures + 1 end
       returning failures
     ), banned as (
       insert into network_bans (project_ref, ip)
       select $1, $2::inet from counted where failures >= $4
       on conflict do nothing
       returning 1
     )
     select exists (select from banned) as banned`,
    [ref, ip, windowMs, threshold],
  );
  return rows[0]?.banned === true;
}

/** Forgets the failure counters whose window (`windowMs`) has passed. */
export async function pruneFailures(db: Queryable, windowMs: number): Promise<void> {
  await db.query(
    `delete from network_auth_failures where window_start < now() - make_interval(secs => $1::float8 / 1000)`,
    [windowMs],
  );
}

/** Forgets the failure counts of these addresses on `ref`. */
export async function forgetFailures(db: Queryable, ref: string, ips: string[]): Promise<void> {
  await db.query('delete from network_auth_failures where project_ref = $1 and ip = any($2::inet[])', [
    ref,
    ips,
  ]);
}

/** The banned addresses of `ref` with their family (4 or 6), sorted. */
export async function listBans(db: Queryable, ref: string): Promise<{ ip: string; family: number }[]> {
  const { rows } = await db.query<{ ip: string; family: number }>(
    `select host(ip) as ip, family(ip) as family from network_bans where project_ref = $1 order by ip`,
    [ref],
  );
  return rows;
}

/** Lifts the bans of these addresses on `ref`; how many were lifted. */
export async function liftBans(db: Queryable, ref: string, ips: string[]): Promise<number> {
  const { rowCount } = await db.query(
    'delete from network_bans where project_ref = $1 and ip = any($2::inet[])',
    [ref, ips],
  );
  return rowCount ?? 0;
}
