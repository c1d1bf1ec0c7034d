/**
 * Organization roles and the one table that says, for every Management API route, which
 * permission it needs and the least role that holds it. The roles follow the hosted platform's
 * access control (supabase.com/docs/guides/platform/access-control):
 *   owner          everything;
 *   administrator  everything in the organization's projects (owner-only: organization ownership);
 *   developer      content of projects (functions, their secrets, types) but no project settings:
 *                  no deleting projects, no network bans/restrictions, no custom hostname, no root
 *                  key, no service_role key;
 *   read_only      reads non-secret configuration only, writes nothing.
 * The permission names are the spec's FGA permissions (management.md §2).
 *
 * `where` says where the organization whose membership counts comes from: the project of `:ref`,
 * the organization of `:slug`, the request body (M2 names its organization there: the route calls
 * `authorizeOrganization` itself), or nowhere (`caller`: answers only ever cover the caller's own
 * organizations, so any authenticated caller may call it).
 *
 * setup.ts refuses to register a route under /v1 that has no row here (the server does not start),
 * and answers 500 instead of a success for a route that never checked its role.
 */
export const ORGANIZATION_ROLES = ['read_only', 'developer', 'administrator', 'owner'] as const;
export type OrganizationRole = (typeof ORGANIZATION_ROLES)[number];

/** How the hosted API's member list names each role. */
export const ROLE_NAMES: Record<OrganizationRole, string> = {
  owner: 'Owner',
  administrator: 'Administrator',
  developer: 'Developer',
  read_only: 'Read only',
};

export function isOrganizationRole(v: unknown): v is OrganizationRole {
  return typeof v === 'string' && (ORGANIZATION_ROLES as readonly string[]).includes(v);
}

/** Whether `role` is at least `min`. */
export function roleAtLeast(role: OrganizationRole, min: OrganizationRole): boolean {
  return ORGANIZATION_ROLES.indexOf(role) >= ORGANIZATION_ROLES.indexOf(min);
}

export interface RoutePermission {
  /** The spec's FGA permission name (documentation; what the role check stands for). */
  permission: string;
  /** Least organization role that may call the route. */
  role: OrganizationRole;
  where: 'project' | 'organization' | 'body' | 'caller';
}

const p = (permission: string, role: OrganizationRole, where: RoutePermission['where']): RoutePermission => ({
  permission,
  role,
  where,
});

/** `METHOD /v1/path` (Fastify's route syntax) → what it needs. docs/management.md lists it. */
export const ROUTE_PERMISSIONS: Readonly<Record<string, RoutePermission>> = {
  'GET /v1/organizations': p('organizations_read', 'read_only', 'caller'),
  'POST /v1/organizations': p('organizations_create', 'read_only', 'caller'),
  'GET /v1/organizations/:slug': p('organizations_read', 'read_only', 'organization'),
  'GET /v1/organizations/:slug/members': p('organization_members_read', 'read_only', 'organization'),

  'GET /v1/projects': p('projects_read', 'read_only', 'caller'),
  'POST /v1/projects': p('organization_projects_create', 'administrator', 'body'),
  'GET /v1/projects/:ref': p('projects_read', 'read_only', 'project'),
  'DELETE /v1/projects/:ref': p('projects_delete', 'administrator', 'project'),
  'GET /v1/projects/:ref/api-keys': p('api_keys_read', 'developer', 'project'),
  // A JWT of the project for a user id (console GraphiQL): who may read the service_role key may sign.
  'POST /v1/projects/:ref/console/role-token': p('api_keys_read', 'developer', 'project'),
  // The console's request builder: a call to the function with a key of the project (its role).
  'POST /v1/projects/:ref/functions/:function_slug/invoke': p('api_keys_read', 'developer', 'project'),
  // The database workflow of the Supabase CLI (src/management/database). Running SQL, migrating or
  // changing the database password or settings writes to the database: developer, as the hosted
  // platform lets developers run SQL; reading connection details needs no secret: read_only.
  'GET /v1/projects/:ref/config/database/pooler': p('database_pooling_config_read', 'read_only', 'project'),
  'PATCH /v1/projects/:ref/config/database/pooler': p(
    'database_pooling_config_write',
    'administrator',
    'project',
  ),
  'GET /v1/projects/:ref/config/database/pgbouncer': p(
    'database_pooling_config_read',
    'read_only',
    'project',
  ),
  'GET /v1/projects/:ref/config/database/postgres': p('database_config_read', 'read_only', 'project'),
  'PUT /v1/projects/:ref/config/database/postgres': p('database_config_write', 'administrator', 'project'),
  'GET /v1/projects/:ref/ssl-enforcement': p('database_ssl_config_read', 'read_only', 'project'),
  'PUT /v1/projects/:ref/ssl-enforcement': p('database_ssl_config_write', 'administrator', 'project'),
  'GET /v1/projects/:ref/database/migrations': p('database_migrations_read', 'read_only', 'project'),
  'POST /v1/projects/:ref/database/migrations': p('database_migrations_write', 'developer', 'project'),
  'PATCH /v1/projects/:ref/database/password': p('database_write', 'administrator', 'project'),
  'POST /v1/projects/:ref/cli/login-role': p('database_write', 'developer', 'project'),
  'DELETE /v1/projects/:ref/cli/login-role': p('database_write', 'developer', 'project'),
  'POST /v1/projects/:ref/database/query': p('database_write', 'developer', 'project'),
  'POST /v1/projects/:ref/database/query/read-only': p('database_read', 'developer', 'project'),
  'GET /v1/projects/:ref/health': p('project_health_read', 'read_only', 'project'),
  'GET /v1/projects/:ref/upgrade/status': p('infra_read', 'read_only', 'project'),
  'POST /v1/projects/:ref/upgrade': p('infra_write', 'administrator', 'project'),
  'GET /v1/projects/:ref/config/storage': p('storage_config_read', 'read_only', 'project'),
  'PATCH /v1/projects/:ref/config/storage': p('storage_config_write', 'administrator', 'project'),
  'GET /v1/projects/:ref/config/auth': p('auth_config_read', 'read_only', 'project'),
  'PATCH /v1/projects/:ref/config/auth': p('auth_config_write', 'administrator', 'project'),
  'GET /v1/projects/:ref/postgrest': p('data_api_config_read', 'read_only', 'project'),
  'PATCH /v1/projects/:ref/postgrest': p('data_api_config_write', 'administrator', 'project'),
  'GET /v1/projects/:ref/database/backups': p('backups_read', 'read_only', 'project'),
  'POST /v1/projects/:ref/database/backups/restore': p('backups_write', 'administrator', 'project'),
  'POST /v1/projects/:ref/database/backups/restore-pitr': p('backups_write', 'administrator', 'project'),
  'POST /v1/projects/:ref/database/backups/restore-point': p('backups_write', 'administrator', 'project'),
  // S3 access keys act as the project's service role (as upstream's credentials do): as api-keys.
  'GET /v1/projects/:ref/storage/s3-access-keys': p('storage_s3_keys_read', 'developer', 'project'),
  'POST /v1/projects/:ref/storage/s3-access-keys': p('storage_s3_keys_write', 'developer', 'project'),
  'DELETE /v1/projects/:ref/storage/s3-access-keys/:id': p('storage_s3_keys_write', 'developer', 'project'),

  'GET /v1/projects/:ref/secrets': p('edge_functions_secrets_read', 'developer', 'project'),
  'POST /v1/projects/:ref/secrets': p('edge_functions_secrets_write', 'developer', 'project'),
  'DELETE /v1/projects/:ref/secrets': p('edge_functions_secrets_write', 'developer', 'project'),

  'GET /v1/projects/:ref/types/typescript': p('database_read', 'read_only', 'project'),

  'POST /v1/projects/:ref/functions': p('edge_functions_write', 'developer', 'project'),
  'GET /v1/projects/:ref/functions': p('edge_functions_read', 'read_only', 'project'),
  'GET /v1/projects/:ref/functions/:function_slug': p('edge_functions_read', 'read_only', 'project'),
  'PATCH /v1/projects/:ref/functions/:function_slug': p('edge_functions_write', 'developer', 'project'),
  'DELETE /v1/projects/:ref/functions/:function_slug': p('edge_functions_write', 'developer', 'project'),
  'GET /v1/projects/:ref/functions/:function_slug/body': p('edge_functions_read', 'read_only', 'project'),
  'PUT /v1/projects/:ref/functions': p('edge_functions_write', 'developer', 'project'),
  'POST /v1/projects/:ref/functions/deploy': p('edge_functions_write', 'developer', 'project'),
  // Invocation logs carry the functions' console output, which may hold anything they print.
  'GET /v1/projects/:ref/functions/:function_slug/logs': p(
    'edge_functions_logs_read',
    'developer',
    'project',
  ),
  // Lists the environment a function sees, secrets' values included.
  'GET /v1/projects/:ref/functions/:function_slug/runtime-config': p(
    'edge_functions_secrets_read',
    'developer',
    'project',
  ),

  'GET /v1/projects/:ref/custom-hostname': p('custom_domain_read', 'read_only', 'project'),
  'DELETE /v1/projects/:ref/custom-hostname': p('custom_domain_write', 'administrator', 'project'),
  'POST /v1/projects/:ref/custom-hostname/initialize': p('custom_domain_write', 'administrator', 'project'),
  'POST /v1/projects/:ref/custom-hostname/reverify': p('custom_domain_write', 'administrator', 'project'),
  'POST /v1/projects/:ref/custom-hostname/activate': p('custom_domain_write', 'administrator', 'project'),

  'GET /v1/projects/:ref/pgsodium': p('project_admin_write', 'administrator', 'project'),
  'PUT /v1/projects/:ref/pgsodium': p('project_admin_write', 'administrator', 'project'),

  'POST /v1/projects/:ref/network-bans/retrieve': p('database_network_bans_read', 'read_only', 'project'),
  'DELETE /v1/projects/:ref/network-bans': p('database_network_bans_write', 'administrator', 'project'),
  'GET /v1/projects/:ref/network-restrictions': p(
    'database_network_restrictions_read',
    'read_only',
    'project',
  ),
  'POST /v1/projects/:ref/network-restrictions/apply': p(
    'database_network_restrictions_write',
    'administrator',
    'project',
  ),
  'PATCH /v1/projects/:ref/network-restrictions': p(
    'database_network_restrictions_write',
    'administrator',
    'project',
  ),
};

export function routeKey(method: string, url: string): string {
  return `${method.toUpperCase()} ${url}`;
}

/** The row of a route; undefined when the table has none. */
export function permissionOf(method: string, url: string): RoutePermission | undefined {
  return ROUTE_PERMISSIONS[routeKey(method, url)];
}
