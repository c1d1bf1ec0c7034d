/**
 * Project service routes the CLI and dashboards read, answered with what Strata really runs:
 * - `GET /health?services=…`: db (a query through the project's API pool), db_postgres_user (the
 *   login has a password), pooler (the router runs), storage (in-process); services Strata does not
 *   run (auth, rest, realtime, pg_bouncer) are UNHEALTHY with an `error` saying so.
 * - `GET /upgrade/status`: no upgrade ever in progress.
 * - `GET /config/storage`: the platform-wide upload limit; `PATCH` is 404 (set by the environment).
 * - Features Strata lacks answer 404 with a message naming them: `/config/auth`, `/postgrest`,
 *   `/database/backups…`, `/upgrade` (POST).
 */
import type { ManagementModule } from '../http/module.js';
import { badRequest, refuse } from '../http/errors.js';
import { projectOf } from '../http/project-access.js';
import { projectLoginRole } from '../../platform/project-login.js';
import { withSuperuserSession } from '../../db/superuser-session.js';

const SERVICES = [
  'auth',
  'db',
  'db_postgres_user',
  'pooler',
  'realtime',
  'rest',
  'storage',
  'pg_bouncer',
] as const;
type Service = (typeof SERVICES)[number];
const NOT_RUN: Partial<Record<Service, string>> = {
  auth: 'Strata does not run an auth server (GoTrue)',
  realtime: 'Strata does not run Realtime',
  rest: 'Strata does not run PostgREST (its project API is GraphQL at /graphql/v1)',
  pg_bouncer: 'Strata does not run PgBouncer (see the pooler service)',
};

export const AUTH_CONFIG_MESSAGE =
  "Auth server settings are not available on Strata: it runs no auth server (GoTrue); project APIs accept JWTs signed with the project's JWT secret";
export const POSTGREST_MESSAGE =
  'PostgREST settings are not available on Strata: it runs no PostgREST (the project API is GraphQL at /graphql/v1)';
export const BACKUPS_MESSAGE =
  'Database backups are not available on Strata yet (no backup schedule or snapshots are kept by the platform)';
export const PITR_MESSAGE = 'Point-in-time recovery is not available on Strata';
export const STORAGE_CONFIG_MESSAGE =
  'Storage settings are platform-wide on Strata: set STRATA_STORAGE_FILE_SIZE_LIMIT (and file_size_limit per bucket)';
export const UPGRADE_MESSAGE =
  'Postgres upgrades are not available on Strata: projects run on the platform server';

export const serviceRoutes: ManagementModule = async (app, { platform }) => {
  app.get(
    '/projects/:ref/health',
    { config: { failureMessage: "Failed to retrieve project's service health status" } },
    async (req) => {
      const raw = (req.query as Record<string, unknown>).services;
      const list = (Array.isArray(raw) ? raw : [raw])
        .filter((v): v is string => typeof v === 'string')
        .flatMap((v) => v.split(','))
        .filter(Boolean);
      if (list.length === 0) throw badRequest('services is required');
      for (const s of list)
        if (!SERVICES.includes(s as Service))
          throw badRequest(`services must be one of the following values: ${SERVICES.join(', ')}`);
      const ctx = await projectOf(req).context();
      const out = [];
      for (const name of [...new Set(list)] as Service[]) {
        let error = NOT_RUN[name];
        if (!error && name === 'db')
          error = await ctx.pool.query('select 1').then(
            () => undefined,
            (e: Error) => e.message,
          );
        if (!error && name === 'db_postgres_user')
          error = await withSuperuserSession(ctx.superuserUrl, (c) =>
            c.query(
              'select rolcanlogin and rolpassword is not null as ok from pg_authid where rolname = $1',
              [projectLoginRole(ctx.ref)],
            ),
          ).then(
            (r) =>
              r.rows[0]?.ok ? undefined : 'the project login has no password (PATCH /database/password)',
            (e: Error) => e.message,
          );
        if (!error && name === 'pooler' && !platform.pooler)
          error = 'the pooler is not running (STRATA_POOLER_PORT)';
        out.push(
          error
            ? { name, healthy: false, status: 'UNHEALTHY', error }
            : { name, healthy: true, status: 'ACTIVE_HEALTHY' },
        );
      }
      return out;
    },
  );

  app.get('/projects/:ref/upgrade/status', async () => ({ databaseUpgradeStatus: null }));
  app.post('/projects/:ref/upgrade', refuse(UPGRADE_MESSAGE));

  app.get('/projects/:ref/config/storage', async () => ({
    fileSizeLimit: platform.config.storageFileSizeLimit,
    features: {
      imageTransformation: { enabled: false },
      s3Protocol: { enabled: false },
    },
  }));
  app.patch('/projects/:ref/config/storage', refuse(STORAGE_CONFIG_MESSAGE));

  app.get('/projects/:ref/config/auth', refuse(AUTH_CONFIG_MESSAGE));
  app.patch('/projects/:ref/config/auth', refuse(AUTH_CONFIG_MESSAGE));
  app.get('/projects/:ref/postgrest', refuse(POSTGREST_MESSAGE));
  app.patch('/projects/:ref/postgrest', refuse(POSTGREST_MESSAGE));
  app.get('/projects/:ref/database/backups', refuse(BACKUPS_MESSAGE));
  app.post('/projects/:ref/database/backups/restore-pitr', refuse(PITR_MESSAGE));
  app.post('/projects/:ref/database/backups/restore-point', refuse(PITR_MESSAGE));
  app.post('/projects/:ref/database/backups/restore', refuse(BACKUPS_MESSAGE));
};
