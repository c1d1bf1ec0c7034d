/**
 * PATCH /v1/projects/{ref}/network-restrictions (adjacent to M25; the CLI's `update --append`):
 * `{add: {dbAllowedCidrs?, dbAllowedCidrsV6?}, remove: {...}}` edits the requested config, which
 * is then applied like M25. The answer is the V2 shape: CIDRs as `{address, type: "v4"|"v6"}`.
 * A never-configured project starts from the open config (0.0.0.0/0, ::/0), so adding to it keeps
 * it open until 0.0.0.0/0 (or ::/0) is removed.
 */
import { CidrError, normalizeCidrs } from './cidr.js';
import type { NetworkRestrictions, RestrictionConfig, RestrictionsResponse } from './restrictions.js';

interface CidrItem {
  address: string;
  type: 'v4' | 'v6';
}

export interface RestrictionsV2Response extends Omit<RestrictionsResponse, 'config' | 'old_config'> {
  config: { dbAllowedCidrs: CidrItem[] };
  old_config?: { dbAllowedCidrs: CidrItem[] };
}

function items(c: RestrictionConfig): { dbAllowedCidrs: CidrItem[] } {
  return {
    dbAllowedCidrs: [
      ...c.dbAllowedCidrs.map((address) => ({ address, type: 'v4' as const })),
      ...c.dbAllowedCidrsV6.map((address) => ({ address, type: 'v6' as const })),
    ],
  };
}

function part(body: Record<string, unknown>, key: 'add' | 'remove'): RestrictionConfig {
  const v = body[key];
  if (v === undefined || v === null) return { dbAllowedCidrs: [], dbAllowedCidrsV6: [] };
  if (typeof v !== 'object' || Array.isArray(v)) throw new CidrError(`${key} must be an object`);
  const o = v as Record<string, unknown>;
  return {
    dbAllowedCidrs: normalizeCidrs(o.dbAllowedCidrs, 4, `${key}.dbAllowedCidrs`),
    dbAllowedCidrsV6: normalizeCidrs(o.dbAllowedCidrsV6, 6, `${key}.dbAllowedCidrsV6`),
  };
}

function edit(list: string[], add: string[], remove: string[]): string[] {
  return [...list, ...add.filter((c) => !list.includes(c))].filter((c) => !remove.includes(c));
}

export async function patchRestrictions(
  restrictions: NetworkRestrictions,
  ref: string,
  body: Record<string, unknown>,
): Promise<RestrictionsV2Response> {
  const add = part(body, 'add');
  const remove = part(body, 'remove');
  const now = await restrictions.current(ref);
  const next: RestrictionConfig = {
    dbAllowedCidrs: edit(now.dbAllowedCidrs, add.dbAllowedCidrs, remove.dbAllowedCidrs),
    dbAllowedCidrsV6: edit(now.dbAllowedCidrsV6, add.dbAllowedCidrsV6, remove.dbAllowedCidrsV6),
  };
  const r = await restrictions.apply(ref, next);
  const { config, old_config, ...rest } = r;
  return { ...rest, config: items(config), ...(old_config ? { old_config: items(old_config) } : {}) };
}
