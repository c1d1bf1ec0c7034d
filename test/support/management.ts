/** A tiny fetch wrapper for Management API tests (the way the CLI calls it: plain HTTP + bearer token). */
import type { TestPlatform } from './platform.js';

// biome-ignore lint/suspicious/noExplicitAny: response JSON, asserted by each test
export interface ApiAnswer<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

// biome-ignore lint/suspicious/noExplicitAny: response JSON, asserted by each test
export async function api<T = any>(
  tp: TestPlatform,
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiAnswer<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  const token = opts.token === undefined ? tp.platform.defaultAccessToken : opts.token;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(tp.url + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('application/json') && text !== '')
    parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** A second user with their own organization and token, straight in the platform database. */
export async function createOtherUser(
  tp: TestPlatform,
  label: string,
): Promise<{ userId: string; token: string; orgSlug: string }> {
  const { randomBytes, createHash } = await import('node:crypto');
  const token = 'sbp_' + randomBytes(20).toString('hex');
  const orgSlug = `org-${label}-${randomBytes(3).toString('hex')}`;
  const pool = tp.platform.pool;
  const u = await pool.query<{ id: string }>('insert into users (email) values ($1) returning id', [
    `${label}-${randomBytes(3).toString('hex')}@example.com`,
  ]);
  const userId = u.rows[0]!.id;
  await pool.query('insert into organizations (id, name) values ($1, $2)', [orgSlug, `Org of ${label}`]);
  await pool.query('insert into organization_members (organization_id, user_id) values ($1, $2)', [
    orgSlug,
    userId,
  ]);
  await pool.query(`insert into access_tokens (user_id, name, token_sha256) values ($1, 'test', $2)`, [
    userId,
    createHash('sha256').update(token).digest('hex'),
  ]);
  return { userId, token, orgSlug };
}
