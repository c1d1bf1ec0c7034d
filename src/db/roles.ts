import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { sqlPath } from './sql-dir.js';
import { quoteLiteral } from './sql-text.js';

/** The role the API logs in as; it switches to anon, authenticated or service_role per request. */
export const API_LOGIN_ROLE = 'authenticator';
export const API_ROLES = ['anon', 'authenticated', 'service_role'] as const;
export type ApiRole = (typeof API_ROLES)[number];

// Errors two sessions changing cluster-wide roles at the same moment can raise (duplicate role,
// "tuple concurrently updated", serialization failure, deadlock).
const ROLE_RACE = new Set(['23505', '42710', 'XX000', '40001', '40P01']);

/**
 * Runs a statement on cluster-wide roles that another database or process may be running at the
 * same moment: retried on ROLE_RACE errors. With `alreadyDone`, that SQLSTATE means another session
 * did it first (e.g. 42710 for a CREATE ROLE) and counts as success.
 */
export async function runRoleStatement(
  client: pg.ClientBase,
  sql: string,
  alreadyDone?: string,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await client.query(sql);
      return;
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      if (code === alreadyDone) return;
      if (attempt >= 8 || !ROLE_RACE.has(code)) throw err;
      await new Promise((r) => setTimeout(r, 30 + Math.random() * 170));
    }
  }
}

/** Creates or updates the cluster-wide API roles (needs a superuser connection). */
export async function ensureClusterRoles(
  client: pg.ClientBase,
  authenticatorPassword: string,
): Promise<void> {
  const sql = readFileSync(sqlPath('cluster', 'roles.sql'), 'utf8')
    .split('{{authenticator_password}}')
    .join(quoteLiteral(authenticatorPassword));
  await runRoleStatement(client, sql);
}
