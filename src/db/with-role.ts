/**
 * Role-scoped transactions, PostgREST style: `set local role` plus `request.jwt.claims` and the
 * role's limits (role-limits.ts), then the work, in one transaction. `queryAs` does it in one round
 * trip (one simple-protocol message).
 */
import type pg from 'pg';
import { quoteIdent, quoteLiteral } from './sql-text.js';
import { withPooledClient } from './pooled-client.js';
import { withTransaction } from './transaction.js';
import { statementTimeoutFor } from './role-limits.js';

export interface Principal {
  /** The database role the request runs as (anon, authenticated, service_role, ...). */
  role: string;
  /** The JWT claims, visible to SQL as current_setting('request.jwt.claims'). */
  claims: Record<string, unknown>;
}

/**
 * The statements that open a request's transaction (no round trip of their own when prefixed):
 * role, claims and the role's limits (role-limits.ts), unless `roleLimits` is false.
 */
export function rolePrelude(p: Principal, opts: { roleLimits?: boolean } = {}): string {
  // Without the role's limits: the session's statement_timeout (the platform's own work as the role).
  const timeout = opts.roleLimits === false ? null : statementTimeoutFor(p.role);
  return `begin; set local role ${quoteIdent(p.role)}; select set_config('request.jwt.claims', ${quoteLiteral(JSON.stringify(p.claims))}, true), set_config('statement_timeout', ${timeout === null ? 'null' : quoteLiteral(timeout)}, true)`;
}

/**
 * rolePrelude's work as one select to prepare once per connection (PostgreSQL then parses and plans
 * it once). set_config('role', …, true) is what SET LOCAL ROLE does, with the same membership
 * check and error. `$1` is the role, `$2` the claims, `$3` the role's statement_timeout (null: the
 * session's) (rolePreludeParams), then the `also` expressions (e.g. a guard that raises), which
 * may use `$4` and on. The select list is evaluated in order: the role is set before the guard.
 */
export function rolePreludeStatement(also: readonly string[] = []): string {
  return `select set_config('role', $1, true), set_config('request.jwt.claims', $2, true), set_config('statement_timeout', $3, true)${also.map((x) => `, ${x}`).join('')}`;
}

/** The first three parameters of rolePreludeStatement. */
export function rolePreludeParams(p: Principal): [string, string, string | null] {
  return [p.role, JSON.stringify(p.claims), statementTimeoutFor(p.role)];
}

/** Runs `work` in one transaction as `principal`; commits on success, rolls back on error. */
export function withRole<T>(
  pool: pg.Pool,
  principal: Principal,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return withTransaction(pool, work, rolePrelude(principal));
}

/**
 * One round trip: begin, role, claims, `sql`, commit in a single message. `sql` must be one
 * statement with every value inlined as an escaped literal (see sql-text.ts). Returns its rows.
 */
export function queryAs<R extends pg.QueryResultRow = pg.QueryResultRow>(
  pool: pg.Pool,
  principal: Principal,
  sql: string,
): Promise<R[]> {
  // On error the message stopped at the failing statement and left the transaction open and
  // aborted: withPooledClient rolls it back before the client goes back to the pool.
  return withPooledClient(pool, async (client) => {
    const results = (await client.query(
      `${rolePrelude(principal)}; ${sql}; commit`,
    )) as unknown as pg.QueryResult<R>[];
    // begin, set role, set_config, then `sql`: its result is the fourth.
    const result = results[3];
    if (result === undefined) throw new Error(`internal error: queryAs got ${results.length} results`);
    return result.rows;
  });
}
