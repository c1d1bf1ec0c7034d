/**
 * The platform's superuser sessions in a project database (provisioning: bootstrap, logins, grants,
 * per-database settings). A tenant owns schemas there (`public`, any it creates, even one named
 * after the superuser, which `"$user"` would put first on the default search_path), so such a
 * session must never resolve a name in them: a function or operator the tenant defines there can be
 * a better match than pg_catalog's for an unknown-typed parameter or an implicit cast
 * (CVE-2018-1058), and would then run as the superuser. These sessions resolve names in pg_catalog
 * only (`search_path` set in the startup packet, which beats any role or database setting), name
 * everything else schema-qualified, and read nothing a tenant can create or replace
 * (docs/security/tenant-platform.md).
 */
import type pg from 'pg';
import { withClient } from './pool.js';

/** Startup options of every platform superuser session in a project database. */
export const CATALOG_ONLY_OPTIONS = '-c search_path=pg_catalog,pg_temp';

/** Like withClient, for a superuser session in a project database: names resolve in pg_catalog only. */
export function withSuperuserSession<T>(
  connectionString: string,
  work: (c: pg.Client) => Promise<T>,
): Promise<T> {
  return withClient(connectionString, work, CATALOG_ONLY_OPTIONS);
}
