/**
 * How to reach a project's database, as the Supabase CLI reads it:
 * - `GET /config/database/pooler`: one PRIMARY entry. With the platform's router running (pooler.ts)
 *   it is the router's address with user `postgres.<ref>` and database `postgres` (the router picks
 *   the project by user name, like the hosted pooler); without it, the project's server itself with
 *   the project's real database name. `?sslmode=disable`: the router offers no TLS.
 * - `GET /config/database/pgbouncer` (older CLIs): the same connection string, session mode.
 * - `PATCH /config/database/pooler`: 404, there is no pool to size.
 * - `GET /ssl-enforcement` reports TLS off; `PUT` with `database: true` is 404 (no TLS to enforce).
 */
import type { ManagementModule } from '../http/module.js';
import { Type } from '@sinclair/typebox';
import { notFound, refuse } from '../http/errors.js';
import { projectOf, type ManagedProject } from '../http/project-access.js';
import { conditional, Optional, Strict } from '../http/schemas.js';
import type { Platform } from '../../platform/platform.js';
import { projectLoginRole } from '../../platform/project-login.js';
import { poolerUrl } from '../../platform/pooler-url.js';

export interface PoolerConfig {
  identifier: string;
  database_type: 'PRIMARY';
  is_using_scram_auth: boolean;
  db_user: string;
  db_host: string;
  db_port: number;
  db_name: string;
  connection_string: string;
  connectionString: string;
  default_pool_size: number | null;
  max_client_conn: number | null;
  pool_mode: 'session';
}

export function poolerConfigOf(platform: Platform, project: ManagedProject): PoolerConfig {
  const user = projectLoginRole(project.ref);
  let host: string;
  let port: number;
  let db: string;
  if (platform.pooler) {
    host = platform.pooler.host;
    port = platform.pooler.port;
    db = 'postgres';
  } else {
    const u = new URL(platform.servers.get(project.dbServer).url);
    host = u.hostname.replace(/^\[|\]$/g, '');
    port = Number(u.port || 5432);
    db = project.dbName;
  }
  const conn = poolerUrl({ host, port }, user, db);
  return {
    identifier: project.ref,
    database_type: 'PRIMARY',
    is_using_scram_auth: true,
    db_user: user,
    db_host: host,
    db_port: port,
    db_name: db,
    connection_string: conn,
    connectionString: conn,
    default_pool_size: null,
    max_client_conn: null,
    pool_mode: 'session',
  };
}

export const POOLER_UPDATE_MESSAGE =
  'Pooler settings cannot be changed on Strata: its pooler address is a session-mode router (one server connection per client), with no pool to size';
export const SSL_ENFORCEMENT_MESSAGE =
  "SSL enforcement is not available on Strata: the platform's PostgreSQL servers and pooler do not offer TLS";

/** `requestedConfig` is checked only when it is an object (anything else is the 404 below). */
const SslEnforcementBody = Strict({
  requestedConfig: Type.Optional(
    Type.Unsafe<{ database?: boolean | null } | null>(
      conditional({ type: 'object' }, Strict({ database: Optional(Type.Boolean()) })),
    ),
  ),
});

export const connectionRoutes: ManagementModule = async (app, { platform }) => {
  app.get(
    '/projects/:ref/config/database/pooler',
    { config: { failureMessage: "Failed to retrieve project's supavisor config" } },
    async (req) => [poolerConfigOf(platform, projectOf(req))],
  );

  app.patch('/projects/:ref/config/database/pooler', refuse(POOLER_UPDATE_MESSAGE));

  app.get(
    '/projects/:ref/config/database/pgbouncer',
    { config: { failureMessage: "Failed to retrieve project's pgbouncer config" } },
    async (req) => {
      const c = poolerConfigOf(platform, projectOf(req));
      return {
        pool_mode: c.pool_mode,
        default_pool_size: c.default_pool_size,
        max_client_conn: c.max_client_conn,
        ignore_startup_parameters: '',
        connection_string: c.connection_string,
      };
    },
  );

  app.get('/projects/:ref/ssl-enforcement', async () => ({
    currentConfig: { database: false },
    appliedSuccessfully: true,
  }));

  app.put('/projects/:ref/ssl-enforcement', { schema: { body: SslEnforcementBody } }, async (req) => {
    if (req.body.requestedConfig?.database !== false) throw notFound(SSL_ENFORCEMENT_MESSAGE);
    return { currentConfig: { database: false }, appliedSuccessfully: true };
  });
};
