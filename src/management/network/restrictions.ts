/**
 * Network restrictions (GET/POST /v1/projects/{ref}/network-restrictions): the requested config is stored (status `stored`, the previous
 * applied config kept as old_config), then applied to pg_hba.conf when the project's database
 * server is one the platform runs itself (embedded); then status becomes `applied`. On servers the
 * platform cannot manage (DATABASE_URL, STRATA_DB_SERVERS) the config stays `stored`, with a
 * `detail` saying why.
 */
import type pg from 'pg';
import { discardClient, withPooledClient } from '../../db/pooled-client.js';
import type { Platform } from '../../platform/platform.js';
import { applyPgHba, type DatabaseRestriction, type ProjectLogins } from '../../platform/pg-hba.js';
import {
  appliedRestrictionsOnServer,
  markRestrictionApplied,
  restrictionRow,
  setRestrictionDetail,
  storeRequestedRestriction,
  type RestrictionConfig,
  type RestrictionRow,
} from '../../platform/network-restriction-store.js';
import { PROJECT_LOGIN_GROUP, projectInternalRoles, projectLoginRole } from '../../platform/project-login.js';
import { activeProjectsOnServer } from '../../platform/projects.js';
import { normalizeCidrs } from './cidr.js';

export type { RestrictionConfig };

export interface RestrictionsResponse {
  entitlement: 'allowed';
  config: RestrictionConfig;
  old_config?: RestrictionConfig;
  status: 'stored' | 'applied';
  updated_at?: string;
  applied_at?: string;
  /** Non-spec: why the config is only stored (or why applying failed). */
  detail?: string;
}

const OPEN: RestrictionConfig = { dbAllowedCidrs: ['0.0.0.0/0'], dbAllowedCidrsV6: ['::/0'] };

export const UNMANAGED_DETAIL =
  "Stored only: this project's PostgreSQL server is not run by the platform (DATABASE_URL or STRATA_DB_SERVERS), so its pg_hba.conf cannot be changed from here; apply the restriction in that server's pg_hba.conf or firewall.";

export function parseRestrictionRequest(body: unknown): RestrictionConfig {
  const b = (body ?? {}) as Record<string, unknown>;
  if (typeof b !== 'object' || Array.isArray(b)) throw new TypeError('body must be a JSON object');
  return {
    dbAllowedCidrs: normalizeCidrs(b.dbAllowedCidrs, 4, 'dbAllowedCidrs'),
    dbAllowedCidrsV6: normalizeCidrs(b.dbAllowedCidrsV6, 6, 'dbAllowedCidrsV6'),
  };
}

function sameConfig(a: RestrictionConfig, b: RestrictionConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function toResponse(r: RestrictionRow | undefined): RestrictionsResponse {
  if (!r) return { entitlement: 'allowed', config: OPEN, status: 'applied' };
  const out: RestrictionsResponse = {
    entitlement: 'allowed',
    config: r.config,
    status: r.status,
    updated_at: r.updated_at.toISOString(),
  };
  if (r.status === 'stored' && r.applied_config && !sameConfig(r.applied_config, r.config))
    out.old_config = r.applied_config;
  if (r.applied_at) out.applied_at = r.applied_at.toISOString();
  if (r.status_detail) out.detail = r.status_detail;
  return out;
}

function toRestriction(ref: string, dbName: string, c: RestrictionConfig): DatabaseRestriction {
  return { ref, dbName, v4: c.dbAllowedCidrs, v6: c.dbAllowedCidrsV6 };
}

/** The applied restrictions of every project on `serverId` (except `exceptRef`), as pg_hba.conf input. */
async function appliedOnServer(
  db: PlatformDb,
  serverId: string,
  exceptRef: string,
): Promise<DatabaseRestriction[]> {
  const rows = await appliedRestrictionsOnServer(db, serverId, exceptRef);
  return rows.map((r) => toRestriction(r.ref, r.db_name, r.applied_config));
}

/** The database logins of every live project on `serverId` (pg_hba.conf keeps each in its own database). */
async function loginsOnServer(db: PlatformDb, serverId: string): Promise<ProjectLogins[]> {
  return (await activeProjectsOnServer(db, serverId)).map((p) => ({
    ref: p.ref,
    dbName: p.dbName,
    login: projectLoginRole(p.ref),
    internal: projectInternalRoles(p.ref),
    group: PROJECT_LOGIN_GROUP,
  }));
}

/** The platform database connection that holds a server's lock (all reads under it go through it). */
type PlatformDb = Pick<pg.ClientBase, 'query'>;

/**
 * The platform's network restrictions: one per platform (built with the Management API's services,
 * management/services.ts), as it keeps this process's queue for each server's pg_hba.conf lock.
 */
export class NetworkRestrictions {
  /** Per server: the tail of this process's queue for the server's lock. */
  private readonly lockQueues = new Map<string, Promise<unknown>>();

  constructor(private readonly platform: Platform) {}

  /** The config a project asks for now (the open config when it never asked for anything). */
  async current(ref: string): Promise<RestrictionConfig> {
    return (await restrictionRow(this.platform.pool, ref))?.config ?? OPEN;
  }

  async get(ref: string): Promise<RestrictionsResponse> {
    return toResponse(await restrictionRow(this.platform.pool, ref));
  }

  /**
   * Renders the applied restrictions and the projects' logins into pg_hba.conf of `serverId` when
   * the platform runs that server itself (after start, and after a project is created or deleted).
   */
  async syncServer(serverId: string): Promise<void> {
    const server = this.platform.servers.get(serverId);
    if (!server.managed || !server.embedded) return;
    await this.withServerLock(server.id, async (db) =>
      applyPgHba(server.url, await appliedOnServer(db, server.id, ''), await loginsOnServer(db, server.id)),
    );
  }

  /**
   * At start: renders the applied restrictions into pg_hba.conf of every server the platform runs
   * itself, so the file matches the platform database (and never-configured projects are open).
   */
  async syncServers(): Promise<void> {
    for (const server of this.platform.servers.all()) await this.syncServer(server.id);
  }

  /** Stores `config`, then applies it (and every other applied restriction on the same server) when the server is managed. */
  async apply(ref: string, config: RestrictionConfig): Promise<RestrictionsResponse> {
    const { platform } = this;
    const project = await platform.project(ref);
    if (!project) throw new Error(`project ${ref} not found`);
    await storeRequestedRestriction(platform.pool, ref, config);
    const server = platform.servers.get(project.dbServer);
    if (!server.managed || !server.embedded) {
      await setRestrictionDetail(platform.pool, ref, UNMANAGED_DETAIL);
      return this.get(ref);
    }
    try {
      await this.withServerLock(server.id, async (db) => {
        const all = await appliedOnServer(db, server.id, ref);
        all.push(toRestriction(ref, project.dbName, config));
        await applyPgHba(server.url, all, await loginsOnServer(db, server.id));
        await markRestrictionApplied(db, ref, config);
      });
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      await setRestrictionDetail(platform.pool, ref, `Applying failed: ${msg}`);
    }
    return this.get(ref);
  }

  /**
   * Runs `work` holding the server's pg_hba.conf lock: one writer per server at a time, across API
   * processes (a session advisory lock) and, within this process, in a queue that waits without a
   * pooled connection. `work` reads through the connection that holds the lock: a writer waiting
   * for the lock on a borrowed connection while the holder needs another one from the same small
   * pool is how parallel project creates once ran the platform pool dry (503 "busy" for projects
   * that were created).
   */
  private async withServerLock<T>(serverId: string, work: (db: PlatformDb) => Promise<T>): Promise<T> {
    const byServer = this.lockQueues;
    const previous = byServer.get(serverId) ?? Promise.resolve();
    const mine = previous.catch(() => {}).then(() => this.lockedOnServer(serverId, work));
    const tail = mine.catch(() => {});
    byServer.set(serverId, tail);
    try {
      return await mine;
    } finally {
      if (byServer.get(serverId) === tail) byServer.delete(serverId);
    }
  }

  private lockedOnServer<T>(serverId: string, work: (db: PlatformDb) => Promise<T>): Promise<T> {
    return withPooledClient(this.platform.pool, async (client) => {
      // One pg_hba.conf writer per server at a time, across API processes.
      await client.query(`select pg_advisory_lock(hashtext('strata-pg-hba:' || $1::text))`, [serverId]);
      try {
        return await work(client);
      } finally {
        // A session lock must not outlive the borrow: a client that cannot unlock is not reused.
        await client
          .query(`select pg_advisory_unlock(hashtext('strata-pg-hba:' || $1::text))`, [serverId])
          .catch((err: unknown) => discardClient(client, err));
      }
    });
  }
}
