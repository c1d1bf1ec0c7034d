import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { sqlPath } from './sql-dir.js';
import { quoteLiteral } from './sql-text.js';

/** The role the API logs in as; it switches to anon, authenticated or service_role per request. */
export const API_LOGIN_ROLE = 'authenticator';
export const API_ROLES = ['anon', 'authenticated', 'service_role'] as const;
export type ApiRole = (typeof API_ROLES)[number];

// Errors two servers' concurrent role creation can raise; the file is idempotent, so we retry.
const RETRYABLE = new Set(['23505', '42710', 'XX000', '40001', '40P01']);

/** Creates or updates the cluster-wide API roles (needs a superuser connection). */
export async function ensureClusterRoles(
  client: pg.ClientBase,
  authenticatorPassword: string,
): Promise<void> {
  const sql = readFileSync(sqlPath('cluster', 'roles.sql'), 'utf8')
    .split('{{authenticator_password}}')
    .join(quoteLiteral(authenticatorPassword));
  for (let attempt = 0; ; attempt++) {
    try {
      await client.query(sql);
      return;
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      if (attempt >= 8 || !RETRYABLE.has(code)) throw err;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 200));
    }
  }
}
