/**
 * Moving a project to another database server (`strata projects move <ref> --to <server>`,
 * docs/cluster.md): the source database is made read-only (new transactions are read-only,
 * open sessions are ended), dumped with pg_dump and restored with pg_restore (what the tenant owns as
 * its own login: project-restore.ts) into a new database of
 * the same name on the target (its logins created there first, the login password's SCRAM verifier
 * copied), then the registry points at the target and every node is told (cluster-events.ts), and
 * the source database and logins are dropped. On a failure before the switch the target database is
 * dropped and the source made writable again.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type pg from 'pg';
import { withClient, withDatabase } from '../db/pool.js';
import { API_LOGIN_ROLE } from '../db/roles.js';
import { quoteIdent, quoteLiteral } from '../db/sql-text.js';
import type { DbServers } from './db-servers.js';
import type { ClusterEvents } from './cluster-events.js';
import { createDatabaseIfMissing, dropProjectDatabase } from './project-database.js';
import { ensureProjectLogin, ensureProjectRoles, projectLoginRole } from './project-login.js';
import { findLiveProject, setProjectServer } from './projects.js';
import { withSuperuserSession } from '../db/superuser-session.js';
import { restoreProjectArchive } from './project-restore.js';

const run = promisify(execFile);

export interface MoveOptions {
  platformPool: pg.Pool;
  servers: DbServers;
  events: ClusterEvents;
  platformKey: string;
  /** Folder of pg_dump / pg_restore; PATH when unset. */
  pgBinDir?: string;
  log: (line: string) => void;
}

const bin = (dir: string | undefined, name: string) => (dir ? join(dir, name) : name);

/** The major version of a PostgreSQL client tool (pg_dump 15.20 → 15). */
async function toolMajor(path: string): Promise<number> {
  try {
    const { stdout } = await run(path, ['--version']);
    return Number(/(\d+)(?:\.\d+)?/.exec(stdout)?.[1] ?? 0);
  } catch {
    throw new Error(`${path} is not available: install the PostgreSQL client tools or set STRATA_PG_BIN_DIR`);
  }
}

async function serverMajor(url: string): Promise<number> {
  return withClient(withDatabase(url, 'postgres'), async (c) => {
    const { rows } = await c.query<{ v: string }>(`select current_setting('server_version_num') as v`);
    return Math.floor(Number(rows[0]?.v ?? 0) / 10000);
  });
}

/** `ALTER DATABASE … SET` settings of a database (all roles), but the read-only switch of the move. */
async function databaseSettings(serverUrl: string, db: string): Promise<Array<[string, string]>> {
  return withClient(withDatabase(serverUrl, 'postgres'), async (c) => {
    const { rows } = await c.query<{ s: string }>(
      `select unnest(setconfig) as s from pg_db_role_setting
        where setrole = 0 and setdatabase = (select oid from pg_database where datname = $1)`,
      [db],
    );
    return rows
      .map((r): [string, string] => {
        const i = r.s.indexOf('=');
        return [r.s.slice(0, i), r.s.slice(i + 1)];
      })
      .filter(([k]) => k !== 'default_transaction_read_only');
  });
}

export async function moveProject(ref: string, to: string, opts: MoveOptions): Promise<void> {
  const project = await findLiveProject(opts.platformPool, ref);
  if (!project) throw new Error(`no live project "${ref}"`);
  const target = opts.servers.get(to);
  const source = opts.servers.get(project.dbServer);
  if (source.id === target.id) throw new Error(`project ${ref} is already on server ${to}`);
  const pgDump = bin(opts.pgBinDir, 'pg_dump');
  const pgRestore = bin(opts.pgBinDir, 'pg_restore');
  const [dumpMajor, restoreMajor, sourceMajor, targetMajor] = await Promise.all([
    toolMajor(pgDump),
    toolMajor(pgRestore),
    serverMajor(source.url),
    serverMajor(target.url),
  ]);
  if (dumpMajor < sourceMajor)
    throw new Error(
      `pg_dump ${dumpMajor} cannot dump server "${source.id}" (PostgreSQL ${sourceMajor}): install pg_dump ${sourceMajor} or newer (STRATA_PG_BIN_DIR)`,
    );
  if (targetMajor < sourceMajor)
    throw new Error(
      `server "${to}" (PostgreSQL ${targetMajor}) is older than "${source.id}" (${sourceMajor})`,
    );
  if (restoreMajor < dumpMajor)
    throw new Error(`pg_restore ${restoreMajor} cannot read a pg_dump ${dumpMajor} archive`);

  const db = project.dbName;
  const sourceDb = withDatabase(source.url, db);
  const targetDb = withDatabase(target.url, db);
  if (!(await createDatabaseIfMissing(target.url, db)))
    throw new Error(`server "${to}" already has a database "${db}": remove it first`);
  const dir = mkdtempSync(join(tmpdir(), 'strata-move-'));
  let switched = false;
  try {
    opts.log(`project ${ref}: read-only on "${source.id}"`);
    await withClient(withDatabase(source.url, 'postgres'), async (c) => {
      await c.query(`alter database ${quoteIdent(db)} set default_transaction_read_only = on`);
      await c.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [db],
      );
    });
    // The project's logins on the target, with the same login password (its SCRAM verifier).
    const verifier = await withClient(source.url, async (c) => {
      const { rows } = await c.query<{ p: string | null }>(
        'select rolpassword as p from pg_authid where rolname = $1',
        [projectLoginRole(ref)],
      );
      return rows[0]?.p ?? null;
    });
    const login = { ref, platformKey: opts.platformKey, password: null };
    await withSuperuserSession(targetDb, async (c) => {
      await ensureProjectRoles(c, login);
      if (verifier)
        await c.query(`alter role ${quoteIdent(projectLoginRole(ref))} password ${quoteLiteral(verifier)}`);
    });
    const archive = join(dir, 'project.dump');
    opts.log(`project ${ref}: dumping from "${source.id}"`);
    await run(pgDump, ['--format=custom', `--file=${archive}`, `--dbname=${sourceDb}`], {
      maxBuffer: 64 << 20,
    });
    opts.log(`project ${ref}: restoring on "${to}"`);
    // What the tenant owns is restored as its login: its CHECK constraints never run as the superuser.
    await restoreProjectArchive({
      pgRestore,
      archive,
      targetDb,
      login: projectLoginRole(ref),
      dir,
      afterDefinitions: () => withSuperuserSession(targetDb, (c) => ensureProjectLogin(c, login)),
    });
    // What a dump without --create leaves out: the database's own grants and settings.
    const settings = await databaseSettings(source.url, db);
    await withSuperuserSession(targetDb, async (c) => {
      await c.query(`grant connect on database ${quoteIdent(db)} to ${quoteIdent(API_LOGIN_ROLE)}`);
      for (const [key, value] of settings)
        await c.query(`alter database ${quoteIdent(db)} set ${quoteIdent(key)} = ${quoteLiteral(value)}`);
      await ensureProjectLogin(c, login);
    });
    await setProjectServer(opts.platformPool, ref, to);
    switched = true;
    await opts.events.publish({ kind: 'project', ref });
    opts.log(`project ${ref}: now on "${to}"; dropping its database on "${source.id}"`);
    await dropProjectDatabase(source.url, db, ref);
  } catch (err) {
    if (!switched) {
      await dropProjectDatabase(target.url, db, ref).catch(() => {});
      await withClient(withDatabase(source.url, 'postgres'), (c) =>
        c.query(`alter database ${quoteIdent(db)} reset default_transaction_read_only`),
      ).catch(() => {});
    }
    throw err;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
