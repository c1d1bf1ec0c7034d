/**
 * The per-request limits of the API roles, applied in the statement that switches to the role
 * (`set_config('statement_timeout', …, true)`, transaction-local), as PostgREST applies a role's
 * settings per transaction. `SET LOCAL ROLE` alone applies none of a role's settings.
 *
 * They are the platform's own values, not read from pg_db_role_setting: anon, authenticated and
 * service_role are shared by every project on a server, and a role may `ALTER ROLE <itself> SET …`
 * — globally or `IN DATABASE` of any database, another project's included (PostgreSQL checks no
 * privilege on the database). A tenant function run as anon can write those rows, so they cannot
 * steer what another project's requests run with. docs/security/limits.md has the details.
 */

/** statement_timeout per API role; a role not listed keeps its session's value. */
export const ROLE_STATEMENT_TIMEOUTS: Readonly<Record<string, string>> = {
  anon: '3s',
  authenticated: '8s',
};

/**
 * The statement_timeout to set for `role`, or null: set_config(…, null, true) resets it to the
 * session's value (the server's, or an `ALTER DATABASE … SET` one).
 */
export function statementTimeoutFor(role: string): string | null {
  return Object.hasOwn(ROLE_STATEMENT_TIMEOUTS, role) ? (ROLE_STATEMENT_TIMEOUTS[role] ?? null) : null;
}
