/** Organizations in the platform database: the ones a user belongs to, and creating one. */
import type { Platform } from '../../platform/platform.js';
import { newProjectRef } from '../../platform/refs.js';
import { insertOrganization, organizationsOfMember } from './store.js';

export interface OrganizationResponse {
  /** Deprecated upstream; equals the slug. */
  id: string;
  slug: string;
  name: string;
}

export async function listOrganizations(platform: Platform, userId: string): Promise<OrganizationResponse[]> {
  const rows = await organizationsOfMember(platform.pool, userId);
  return rows.map((r) => ({ id: r.id, slug: r.id, name: r.name }));
}

/** A new organization with a random 20-letter slug; the caller becomes its owner. */
export async function createOrganization(
  platform: Platform,
  userId: string,
  name: string,
): Promise<OrganizationResponse> {
  const slug = await insertOrganization(platform.pool, name, userId, newProjectRef);
  return { id: slug, slug, name };
}
