/**
 * A project's database on its server: created from template0, bootstrapped (the versioned SQL of
 * sql/project, the areas' bootstrap hooks, then the project's own logins), and dropped with those
 * logins. The one place that runs DDL for a project's database.
 */
import type pg from 'pg';
import { bootstrapProjectDatabase } from '../db/bootstrap.js';
import { withClient, withDatabase } from '../db/pool.js';
import { quoteIdent } from '../db/sql-text.js';
import { dropProjectLogin, ensureProjectLogin } from './project-login.js';
import { withSuperuserSession } from '../db/superuser-session.js';

/** A step run on every project database after its SQL migrations (e.g. the GraphQL engine's objects). */
export type ProjectBootstrapHook = (client: pg.ClientBase) => Promise<void>;

export interface ProjectBootstrap {
  ref: string;
  /** The platform key (derives the internal SQL login's password). */
  platformKey: string;
  hooks: readonly ProjectBootstrapHook[];
}

/**
 * Brings a project database up to date: migrations, hooks, then the project's login (created with
 * `password` when missing; `null`: it cannot log in until one is set). Idempotent: run on creation
 * and on the first load of each process.
 */
export async function bootstrapProject(
  client: pg.ClientBase,
  opts: ProjectBootstrap,
  password: string | null = null,
): Promise<void> {
  await bootstrapProjectDatabase(client);
  for (const hook of opts.hooks) await hook(client);
  await ensureProjectLogin(client, { ref: opts.ref, platformKey: opts.platformKey, password });
}

/** Returns true when this call created it. */
export async function createDatabaseIfMissing(serverUrl: string, name: string): Promise<boolean> {
  return withClient(withDatabase(serverUrl, 'postgres'), async (c) => {
    const exists = await c.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount) return false;
    try {
      await c.query(`create database ${quoteIdent(name)} template template0 encoding 'UTF8'`);
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === '42P04') return false; // created concurrently
      throw err;
    }
  });
}

/**
 * Creates (when missing) and bootstraps a project's database; returns how to undo it. On failure
 * nothing is left behind: a database this call created is dropped, and the project's logins too.
 */
export async function createProjectDatabase(
  serverUrl: string,
  dbName: string,
  opts: ProjectBootstrap & { password: string | null },
): Promise<{ undo(): Promise<void> }> {
  const created = await createDatabaseIfMissing(serverUrl, dbName);
  const undo = async () => {
    if (created) await dropDatabase(serverUrl, dbName).catch(() => {});
    await withClient(serverUrl, (c) => dropProjectLogin(c, opts.ref)).catch(() => {});
  };
  try {
    await withSuperuserSession(withDatabase(serverUrl, dbName), (c) =>
      bootstrapProject(c, opts, opts.password),
    );
  } catch (err) {
    await undo();
    throw err;
  }
  return { undo };
}

/** Drops a project's database (closing its sessions) and then its logins. */
export async function dropProjectDatabase(serverUrl: string, dbName: string, ref: string): Promise<void> {
  await dropDatabase(serverUrl, dbName);
  await withClient(serverUrl, (c) => dropProjectLogin(c, ref));
}

async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await dropRealtimeSlots(serverUrl, name);
  await withClient(withDatabase(serverUrl, 'postgres'), (c) =>
    c.query(`drop database if exists ${quoteIdent(name)} with (force)`),
  );
}

/**
 * A database with replication slots cannot be dropped, even with (force): realtime's change feeds
 * (src/realtime/change-feed.ts) are ended and their slots dropped first (a logical slot is dropped
 * from a session on its own database). Nothing to do when the database is already gone.
 */
async function dropRealtimeSlots(serverUrl: string, name: string): Promise<void> {
  // A superuser session in the tenant's database: names resolve in pg_catalog only.
  await withSuperuserSession(withDatabase(serverUrl, name), async (c) => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const { rows } = await c.query<{ slot_name: string; active_pid: number | null }>(
        `select slot_name, active_pid from pg_catalog.pg_replication_slots
          where database = pg_catalog.current_database()
            and pg_catalog.starts_with(slot_name::text, 'strata_rt_')`,
      );
      if (!rows.length) return;
      for (const r of rows)
        if (r.active_pid === null)
          await c.query('select pg_catalog.pg_drop_replication_slot($1)', [r.slot_name]).catch(() => {});
        else await c.query('select pg_catalog.pg_terminate_backend($1)', [r.active_pid]).catch(() => {});
      await new Promise((done) => setTimeout(done, 50));
    }
  }).catch(() => {});
}
