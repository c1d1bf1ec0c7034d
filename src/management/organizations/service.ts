/** Organizations in the platform database: the ones a user belongs to, and creating one. */
import type { Platform } from '../../platform/platform.js';
import { newProjectRef } from '../../platform/refs.js';
import { withTransaction } from '../../db/transaction.js';

export interface OrganizationResponse {
  /** Deprecated upstream; equals the slug. */
  id: string;
  slug: string;
  name: string;
}

export async function listOrganizations(platform: Platform, userId: string): Promise<OrganizationResponse[]> {
  const { rows } = await platform.pool.query<{ id: string; name: string }>(
    `select o.id, o.name from organizations o
       join organization_members m on m.organization_id = o.id and m.user_id = $1
      order by o.created_at, o.id`,
    [userId],
  );
  return rows.map((r) => ({ id: r.id, slug: r.id, name: r.name }));
}

/** A new organization with a random 20-letter slug; the caller becomes its owner. */
export async function createOrganization(
  platform: Platform,
  userId: string,
  name: string,
): Promise<OrganizationResponse> {
  return withTransaction(platform.pool, async (client) => {
    let slug = '';
    for (let attempt = 0; ; attempt++) {
      slug = newProjectRef();
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
    return { id: slug, slug, name };
  });
}
