/**
 * The platform's own metadata database: created on the primary server (closed to project logins),
 * migrated from sql/platform, told which database servers exist, and given the default account
 * (user, organization, access token) that `npm start` prints.
 */
import type pg from 'pg';
import { withClient } from '../db/pool.js';
import { withPooledClient } from '../db/pooled-client.js';
import { loadMigrations, migrate } from '../db/migrate.js';
import { sqlPath } from '../db/sql-dir.js';
import { quoteIdent } from '../db/sql-text.js';
import type { DbServer } from './db-servers.js';
import { createDatabaseIfMissing } from './project-database.js';

export const DEFAULT_ORGANIZATION_ID = 'default-org';
const DEFAULT_USER_EMAIL = 'admin@localhost';

export async function createPlatformDatabase(primaryUrl: string, name: string): Promise<void> {
  await createDatabaseIfMissing(primaryUrl, name);
  // Project logins must never reach the platform's own database.
  await withClient(primaryUrl, (c) =>
    c.query(`revoke connect, temporary on database ${quoteIdent(name)} from public`),
  );
}

export async function migratePlatformDatabase(pool: pg.Pool, servers: DbServer[]): Promise<void> {
  await withPooledClient(pool, async (client) => {
    await migrate(client, loadMigrations(sqlPath('platform')), {
      schema: 'strata_meta',
      table: 'platform_migrations',
    });
    for (const s of servers) {
      await client.query(
        'insert into db_servers (id, managed) values ($1, $2) on conflict (id) do update set managed = excluded.managed',
        [s.id, s.managed],
      );
    }
  });
}

/** The default user, its organization, and its access token (stored as `tokenSha256`). */
export async function ensureDefaultAccount(pool: pg.Pool, tokenSha256: string): Promise<void> {
  await pool.query(`insert into users (email) values ($1) on conflict (email) do nothing`, [
    DEFAULT_USER_EMAIL,
  ]);
  await pool.query(
    `insert into organizations (id, name) values ($1, 'Default Organization') on conflict (id) do nothing`,
    [DEFAULT_ORGANIZATION_ID],
  );
  await pool.query(
    `insert into organization_members (organization_id, user_id)
     select $1, id from users where email = $2 on conflict do nothing`,
    [DEFAULT_ORGANIZATION_ID, DEFAULT_USER_EMAIL],
  );
  await pool.query(
    `insert into access_tokens (user_id, name, token_sha256)
     select id, 'default', $1 from users where email = $2 on conflict (token_sha256) do nothing`,
    [tokenSha256, DEFAULT_USER_EMAIL],
  );
}
