/**
 * A session in a project's database *as the project's login* (`postgres.<ref>`), for the platform's
 * reads of what the tenant owns (the migration history, the catalog for type generation): whatever
 * the tenant planted on that path (a view, a function shadowing a catalog one) then runs with the
 * tenant's own privileges, never the platform's (docs/security/tenant-platform.md).
 *
 * It logs in as the platform-internal `strata_sql.<ref>` (member of the login, password derived
 * from the platform key; see platform/project-login.ts) and switches to the login, as
 * `POST …/database/query` does.
 */
import pg from 'pg';
import { withDatabase, withUser } from '../../db/pool.js';
import { quoteIdent } from '../../db/sql-text.js';
import type { Platform } from '../../platform/platform.js';
import type { ProjectContext } from '../../platform/project-context.js';
import { projectLoginRole, projectSqlPassword, projectSqlRole } from '../../platform/project-login.js';

/** The internal login's URL for a project's database. */
export function projectSqlUrl(platform: Platform, ctx: ProjectContext): string {
  const server = platform.servers.get(ctx.dbServer);
  return withUser(
    withDatabase(server.url, ctx.dbName),
    projectSqlRole(ctx.ref),
    projectSqlPassword(platform.state.platformKey, ctx.ref),
  );
}

/** Runs `work` as the project's login, with the configured statement timeout; the connection is closed after. */
export async function withProjectLoginSession<T>(
  platform: Platform,
  ctx: ProjectContext,
  work: (c: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({
    connectionString: projectSqlUrl(platform, ctx),
    application_name: 'strata',
  });
  client.on('error', () => {});
  await client.connect();
  try {
    const timeoutMs = Math.max(1, Math.floor(platform.config.dbQueryTimeoutMs));
    await client.query(
      `set role ${quoteIdent(projectLoginRole(ctx.ref))}; set statement_timeout = ${timeoutMs}`,
    );
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}
