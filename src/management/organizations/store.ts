/**
 * The organizations store: the platform database's tables organizations and organization_members
 * as the Management API reads and creates them (members and tokens: members.ts).
 */
import type pg from 'pg';
import { withTransaction } from '../../db/transaction.js';

type Queryable = Pick<pg.ClientBase, 'query'>;

/** The organizations `userId` belongs to, oldest first. */
export async function organizationsOfMember(
  db: Queryable,
  userId: string,
): Promise<{ id: string; name: string }[]> {
  const { rows } = await db.query<{ id: string; name: string }>(
    `select o.id, o.name from organizations o
       join organization_members m on m.organization_id = o.id and m.user_id = $1
      order by o.created_at, o.id`,
    [userId],
  );
  return rows;
}

/** Organization `slug` with the role of `userId` in it (null: not a member); undefined when there is none. */
export async function organizationWithRole(
  db: Queryable,
  slug: string,
  userId: string,
): Promise<{ id: string; name: string; role: string | null } | undefined> {
  const { rows } = await db.query<{ id: string; name: string; role: string | null }>(
    `select o.id, o.name,
            (select m.role from organization_members m where m.organization_id = o.id and m.user_id = $2) as role
       from organizations o where o.id = $1`,
    [slug, userId],
  );
  return rows[0];
}

/**
 * Creates an organization named `name` owned by `userId`, in one transaction: its slug is the first
 * of `newSlug()`'s answers not taken (a few tries). Returns the slug.
 */
export async function insertOrganization(
  pool: pg.Pool,
  name: string,
  userId: string,
  newSlug: () => string,
): Promise<string> {
  return withTransaction(pool, async (client) => {
    let slug = '';
    for (let attempt = 0; ; attempt++) {
      slug = newSlug();
      const ins = await client.query(
        'insert into organizations (id, name) values ($1, $2) on conflict (id) do nothing',
        [slug, name],
      );
      if (ins.rowCount) break;
      if (attempt > 5) throw new Error('could not allocate an organization slug');
    }
    await client.query(
      `insert into organization_members (organization_id, user_id, role) values ($1, $2, 'owner')`,
      [slug, userId],
    );
    return slug;
  });
}
