/**
 * The network restrictions store: the platform database's table network_restrictions (per project,
 * the address ranges asked for, and those applied to pg_hba.conf). Read by the PostgreSQL router
 * (pooler.ts) and written by the Management API (management/network/restrictions.ts).
 */
import type pg from 'pg';

type Queryable = Pick<pg.ClientBase, 'query'>;

/** The address ranges a project's database accepts connections from. */
export interface RestrictionConfig {
  dbAllowedCidrs: string[];
  dbAllowedCidrsV6: string[];
}

export interface RestrictionRow {
  config: RestrictionConfig;
  status: 'stored' | 'applied';
  applied_config: RestrictionConfig | null;
  status_detail: string | null;
  updated_at: Date;
  applied_at: Date | null;
}

/** A project's row; undefined when it never asked for a restriction. */
export async function restrictionRow(db: Queryable, ref: string): Promise<RestrictionRow | undefined> {
  const { rows } = await db.query<RestrictionRow>(
    'select config, status, applied_config, status_detail, updated_at, applied_at from network_restrictions where project_ref = $1',
    [ref],
  );
  return rows[0];
}

/** The config applied to a project's database (as far as it was), or undefined for none. */
export async function appliedRestriction(
  db: Queryable,
  ref: string,
): Promise<Partial<RestrictionConfig> | undefined> {
  const { rows } = await db.query<{ applied_config: Partial<RestrictionConfig> | null }>(
    'select applied_config from network_restrictions where project_ref = $1',
    [ref],
  );
  return rows[0]?.applied_config ?? undefined;
}

/** The applied configs of the live projects on `serverId` (except `exceptRef`), with their databases. */
export async function appliedRestrictionsOnServer(
  db: Queryable,
  serverId: string,
  exceptRef: string,
): Promise<{ ref: string; db_name: string; applied_config: RestrictionConfig }[]> {
  const { rows } = await db.query<{ ref: string; db_name: string; applied_config: RestrictionConfig }>(
    `select p.ref, p.db_name, r.applied_config from network_restrictions r join projects p on p.ref = r.project_ref
     where p.db_server = $1 and r.applied_config is not null and p.status <> 'REMOVED' and p.ref <> $2`,
    [serverId, exceptRef],
  );
  return rows;
}

/** Stores the config a project asks for (status `stored`, no detail yet). */
export async function storeRequestedRestriction(
  db: Queryable,
  ref: string,
  config: RestrictionConfig,
): Promise<void> {
  await db.query(
    `insert into network_restrictions (project_ref, config, status, status_detail) values ($1, $2::jsonb, 'stored', null)
     on conflict (project_ref) do update set config = excluded.config, status = 'stored', status_detail = null, updated_at = now()`,
    [ref, JSON.stringify(config)],
  );
}

/** Says why a project's config is only stored. */
export async function setRestrictionDetail(db: Queryable, ref: string, detail: string): Promise<void> {
  await db.query('update network_restrictions set status_detail = $2 where project_ref = $1', [ref, detail]);
}

/** Marks `config` applied, unless the project asked for another config meanwhile. */
export async function markRestrictionApplied(
  db: Queryable,
  ref: string,
  config: RestrictionConfig,
): Promise<void> {
  await db.query(
    `update network_restrictions set status = 'applied', applied_config = config, applied_at = now(), status_detail = null
     where project_ref = $1 and config = $2::jsonb`,
    [ref, JSON.stringify(config)],
  );
}
