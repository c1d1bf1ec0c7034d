/** Personal access tokens as the Management API's auth hook reads them (table access_tokens). */
import type pg from 'pg';

type Queryable = Pick<pg.ClientBase, 'query'>;

/** The live (not revoked) token with this SHA-256 digest; `stale` when its last use is over a minute old. */
export async function liveTokenByDigest(
  db: Queryable,
  digest: string,
): Promise<{ id: string; user_id: string; stale: boolean } | undefined> {
  const { rows } = await db.query<{ id: string; user_id: string; stale: boolean }>(
    `select id, user_id, (last_used_at is null or last_used_at < now() - interval '1 minute') as stale
       from access_tokens where token_sha256 = $1 and revoked_at is null`,
    [digest],
  );
  return rows[0];
}

/** Records that the token was used now. */
export async function touchToken(db: Queryable, id: string): Promise<void> {
  await db.query('update access_tokens set last_used_at = now() where id = $1', [id]);
}
