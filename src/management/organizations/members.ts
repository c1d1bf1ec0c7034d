/**
 * Organization members and personal access tokens in the platform database: what the member route
 * (GET /v1/organizations/{slug}/members) reads and what `strata users` / `strata tokens` change on
 * a self-hosted platform. Tokens are shown once and stored as a SHA-256 digest only.
 */
import type pg from 'pg';
import { withTransaction } from '../../db/transaction.js';
import { newAccessToken } from '../../platform/local-state.js';
import { sha256Hex } from '../../platform/sha256.js';
import { ROLE_NAMES, type OrganizationRole } from '../http/permissions.js';

/** A refusal the caller can act on (a CLI prints it; a route answers 4xx with it). */
export class MemberError extends Error {
  constructor(
    message: string,
    readonly kind: 'not_found' | 'conflict' | 'invalid' = 'invalid',
  ) {
    super(message);
    this.name = 'MemberError';
  }
}

/** One member as the hosted API lists it (V1OrganizationMemberResponse). */
export interface MemberResponse {
  user_id: string;
  user_name: string;
  email: string;
  role_name: string;
  mfa_enabled: boolean;
}

export async function listMembers(pool: pg.Pool, orgSlug: string): Promise<MemberResponse[]> {
  const { rows } = await pool.query<{ id: string; email: string; role: OrganizationRole }>(
    `select u.id, u.email, m.role from organization_members m join users u on u.id = m.user_id
      where m.organization_id = $1 order by u.email`,
    [orgSlug],
  );
  return rows.map((r) => ({
    user_id: r.id,
    user_name: r.email,
    email: r.email,
    role_name: ROLE_NAMES[r.role] ?? r.role,
    mfa_enabled: false,
  }));
}

export interface UserMembership {
  email: string;
  userId: string;
  organization: string | null;
  role: OrganizationRole | null;
}

/** Every user with each organization they belong to (one row per membership; users without any get one row). */
export async function listUsers(pool: pg.Pool, orgSlug?: string): Promise<UserMembership[]> {
  const { rows } = await pool.query<{
    id: string;
    email: string;
    organization_id: string | null;
    role: string | null;
  }>(
    `select u.id, u.email, m.organization_id, m.role from users u
       left join organization_members m on m.user_id = u.id
      where $1::text is null or m.organization_id = $1
      order by u.email, m.organization_id`,
    [orgSlug ?? null],
  );
  return rows.map((r) => ({
    email: r.email,
    userId: r.id,
    organization: r.organization_id,
    role: r.role as OrganizationRole | null,
  }));
}

async function requireOrganization(client: pg.ClientBase, orgSlug: string): Promise<void> {
  // Locks the organization so that two concurrent changes cannot both remove its last owner.
  const { rowCount } = await client.query('select 1 from organizations where id = $1 for update', [orgSlug]);
  if (!rowCount) throw new MemberError(`organization ${orgSlug} does not exist`, 'not_found');
}

async function ownersLeft(client: pg.ClientBase, orgSlug: string, exceptUserId: string): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `select count(*)::int as n from organization_members where organization_id = $1 and role = 'owner' and user_id <> $2`,
    [orgSlug, exceptUserId],
  );
  return rows[0]?.n ?? 0;
}

/** Adds `email` (created if new) to the organization with `role`, or changes the role of a member. */
export async function addMember(
  pool: pg.Pool,
  email: string,
  orgSlug: string,
  role: OrganizationRole,
): Promise<{ userId: string; created: boolean; previousRole: OrganizationRole | null }> {
  return withTransaction(pool, async (client) => {
    await requireOrganization(client, orgSlug);
    const ins = await client.query<{ id: string }>(
      'insert into users (email) values ($1) on conflict (email) do nothing returning id',
      [email],
    );
    const created = ins.rows.length > 0;
    const userId =
      ins.rows[0]?.id ??
      (await client.query<{ id: string }>('select id from users where email = $1', [email])).rows[0]?.id;
    if (!userId) throw new MemberError(`${email} was removed meanwhile; try again`, 'conflict');
    const prev = await client.query<{ role: OrganizationRole }>(
      'select role from organization_members where organization_id = $1 and user_id = $2',
      [orgSlug, userId],
    );
    const previousRole = prev.rows[0]?.role ?? null;
    if (previousRole === 'owner' && role !== 'owner' && (await ownersLeft(client, orgSlug, userId)) === 0)
      throw new MemberError(`${email} is the last owner of ${orgSlug}; add another owner first`, 'conflict');
    await client.query(
      `insert into organization_members (organization_id, user_id, role) values ($1, $2, $3)
       on conflict (organization_id, user_id) do update set role = excluded.role`,
      [orgSlug, userId, role],
    );
    return { userId, created, previousRole };
  });
}

/**
 * Removes `email` from one organization, or (without one) deletes the user with their tokens and
 * memberships. The last owner of an organization cannot be removed.
 */
export async function removeMember(pool: pg.Pool, email: string, orgSlug?: string): Promise<void> {
  await withTransaction(pool, async (client) => {
    const user = await client.query<{ id: string }>('select id from users where email = $1 for update', [
      email,
    ]);
    const userId = user.rows[0]?.id;
    if (!userId) throw new MemberError(`no user ${email}`, 'not_found');
    const { rows: memberships } = await client.query<{ organization_id: string; role: string }>(
      `select organization_id, role from organization_members
        where user_id = $1 and ($2::text is null or organization_id = $2) order by organization_id`,
      [userId, orgSlug ?? null],
    );
    if (orgSlug !== undefined && memberships.length === 0)
      throw new MemberError(`${email} is not a member of ${orgSlug}`, 'not_found');
    for (const m of memberships) {
      await requireOrganization(client, m.organization_id);
      if (m.role === 'owner' && (await ownersLeft(client, m.organization_id, userId)) === 0)
        throw new MemberError(
          `${email} is the last owner of ${m.organization_id}; add another owner first`,
          'conflict',
        );
    }
    if (orgSlug === undefined) await client.query('delete from users where id = $1', [userId]);
    else
      await client.query('delete from organization_members where organization_id = $1 and user_id = $2', [
        orgSlug,
        userId,
      ]);
  });
}

export interface TokenRow {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** A new personal access token for `email`: the token itself is returned here and never again. */
export async function createToken(
  pool: pg.Pool,
  email: string,
  name: string,
): Promise<{ id: string; token: string }> {
  const token = newAccessToken();
  const { rows } = await pool.query<{ id: string }>(
    `insert into access_tokens (user_id, name, token_sha256)
     select id, $2, $3 from users where email = $1 returning id`,
    [email, name, sha256Hex(token)],
  );
  if (!rows[0]) throw new MemberError(`no user ${email} (add one with \`strata users add\`)`, 'not_found');
  return { id: rows[0].id, token };
}

export async function listTokens(pool: pg.Pool, email?: string): Promise<TokenRow[]> {
  const { rows } = await pool.query<{
    id: string;
    email: string;
    name: string;
    created_at: Date;
    last_used_at: Date | null;
  }>(
    `select t.id, u.email, t.name, t.created_at, t.last_used_at from access_tokens t join users u on u.id = t.user_id
      where t.revoked_at is null and ($1::text is null or u.email = $1) order by u.email, t.created_at, t.id`,
    [email ?? null],
  );
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    name: r.name,
    createdAt: r.created_at.toISOString(),
    lastUsedAt: r.last_used_at ? r.last_used_at.toISOString() : null,
  }));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Revokes the token with `id` (from `strata tokens list`); it stops working at once. The row stays
 * (marked revoked) so that the default token, re-registered at every start, stays revoked too.
 */
export async function revokeToken(pool: pg.Pool, id: string): Promise<void> {
  if (!UUID.test(id)) throw new MemberError(`not a token id: ${id} (see \`strata tokens list\`)`);
  const { rowCount } = await pool.query(
    'update access_tokens set revoked_at = now() where id = $1 and revoked_at is null',
    [id],
  );
  if (!rowCount) throw new MemberError(`no token ${id}`, 'not_found');
}
