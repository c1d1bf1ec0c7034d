/**
 * Installs the GraphQL engine's database-side objects in one database:
 *  - as the PostgreSQL extension `strata_graphql` (control + script written to the server's
 *    extension folder) where that folder is ours to write: the embedded server's (option
 *    'embedded', the default of `strata serve` and the platform), or any writable one ('auto');
 *    an installed version (or engine SQL) that differs from the files' is replaced by drop + create
 *    in ONE transaction, so API requests running meanwhile see the old objects or the new ones;
 *  - elsewhere as plain SQL (the engine's installSchema), the version readable through
 *    graphql.strata_version() in both cases.
 * Either way the objects come from their one source, sql/graphql/objects.sql (see engine-sql.ts).
 * Needs a superuser connection (event triggers).
 */
import type pg from 'pg';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { embeddedExtensionDir } from '../../db/embedded.js';
import { firstRow } from '../../db/first-row.js';
import { quoteIdent, quoteLiteral } from '../../db/sql-text.js';
import { loadEngine } from '../http/engine-port.js';
import { engineObjectsSql, eventTriggerNames } from './engine-sql.js';
import { serverExtensionDir, isWritableDir } from './extension-dir.js';
import {
  DEFAULT_EXTENSION_NAME,
  checkExtensionName,
  objectsHash,
  versionFunctionSql,
  writeExtensionFiles,
} from './extension-files.js';
import { STRATA_VERSION } from './version.js';

export interface InstallOptions {
  /**
   * Where the extension files go:
   * - 'embedded': the server's folder (pg_config) only when it is the embedded PostgreSQL's (in
   *   node_modules); plain SQL on any other server, whose folders are never touched;
   * - 'auto': the server's folder whenever it is writable here;
   * - a folder: that one (an error if the server does not see it); false: plain SQL.
   */
  extensionDir?: string | 'embedded' | 'auto' | false;
  /** Extension name (default strata_graphql). */
  name?: string;
  /** Version to install (default: package.json's). */
  version?: string;
}

export interface InstallReport {
  mode: 'extension' | 'sql';
  name: string;
  /** Version now installed. */
  version: string;
  /** What was done: nothing, a first install, or a replacement of another version/build. */
  action: 'unchanged' | 'installed' | 'replaced';
  previousVersion?: string;
  /** Set when a newer version could not replace the installed one (objects of the database depend on it). */
  warning?: string;
}

const LOCK_KEY = createHash('sha256').update('strata graphql install').digest().readInt32BE(0);

interface Availability {
  default_version: string | null;
  installed_version: string | null;
}

async function availability(client: pg.ClientBase, name: string): Promise<Availability | undefined> {
  return (
    await client.query<Availability>(
      'select default_version, installed_version from pg_available_extensions where name = $1',
      [name],
    )
  ).rows[0];
}

async function installedHash(client: pg.ClientBase): Promise<string | undefined> {
  const { ok } = firstRow(
    await client.query<{ ok: boolean }>(
      `select to_regprocedure('graphql.strata_objects_hash()') is not null as ok`,
    ),
    'to_regprocedure()',
  );
  if (!ok) return undefined;
  return firstRow(
    await client.query<{ h: string }>('select graphql.strata_objects_hash() as h'),
    'graphql.strata_objects_hash()',
  ).h;
}

async function schemaVersion(client: pg.ClientBase): Promise<number | undefined> {
  const { ok } = firstRow(
    await client.query<{ ok: boolean }>(`select to_regclass('graphql.seq_schema_version') is not null as ok`),
    'to_regclass()',
  );
  if (!ok) return undefined;
  return Number(
    firstRow(
      await client.query<{ v: string }>('select last_value::text as v from graphql.seq_schema_version'),
      'the schema version sequence',
    ).v,
  );
}

async function inTransaction<T>(client: pg.ClientBase, work: () => Promise<T>): Promise<T> {
  await client.query('begin');
  try {
    await client.query('select pg_advisory_xact_lock($1)', [LOCK_KEY]);
    const out = await work();
    await client.query('commit');
    return out;
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  }
}

/** Bumps the schema version past its value before the swap, so every cached schema is rebuilt. */
async function bumpSchemaVersion(client: pg.ClientBase, before: number | undefined): Promise<void> {
  const now = await schemaVersion(client);
  if (now === undefined) return;
  const next = Math.min(Math.max(before ?? 0, now) + 1, 2147483647);
  await client.query(`select setval('graphql.seq_schema_version', $1)`, [next]);
  await client.query(`select pg_notify('strata_schema_version', current_database() || ':' || $1)`, [
    String(next),
  ]);
}

async function installExtension(
  client: pg.ClientBase,
  name: string,
  version: string,
  engineSql: string,
): Promise<InstallReport> {
  try {
    return await swapExtension(client, name, version, engineSql);
  } catch (err) {
    // Objects of the database depend on the installed extension: keep it (and the API) as it is.
    if ((err as { code?: string }).code !== '2BP01') throw err;
    const installed = (await availability(client, name))?.installed_version;
    if (!installed) throw err;
    return {
      mode: 'extension',
      name,
      version: installed,
      action: 'unchanged',
      warning: `${name} ${version} not installed, ${installed} kept: ${(err as Error).message}`,
    };
  }
}

async function swapExtension(
  client: pg.ClientBase,
  name: string,
  version: string,
  engineSql: string,
): Promise<InstallReport> {
  const hash = objectsHash(engineSql);
  return inTransaction(client, async () => {
    const avail = await availability(client, name);
    const installed = avail?.installed_version ?? undefined;
    if (installed === version && (await installedHash(client)) === hash) {
      return { mode: 'extension', name, version, action: 'unchanged' } as const;
    }
    const before = await schemaVersion(client);
    if (installed) {
      await client.query(`drop extension ${quoteIdent(name)}`);
    } else {
      // Plain objects from an earlier install (or the project migration 0003) give way to the extension.
      for (const t of eventTriggerNames(engineSql))
        await client.query(`drop event trigger if exists ${quoteIdent(t)}`);
      await client.query('drop schema if exists graphql cascade');
    }
    await client.query(`create extension ${quoteIdent(name)} version ${quoteLiteral(version)}`);
    await bumpSchemaVersion(client, before);
    return {
      mode: 'extension',
      name,
      version,
      action: installed ? 'replaced' : 'installed',
      previousVersion: installed,
    } as const;
  });
}

async function installPlain(
  client: pg.ClientBase,
  name: string,
  version: string,
  engineSql: string,
): Promise<InstallReport> {
  const ext = (
    await client.query<{ extversion: string }>('select extversion from pg_extension where extname = $1', [
      name,
    ])
  ).rows[0];
  if (ext) {
    // Installed as an extension earlier, but its files cannot be updated from here: keep it.
    return { mode: 'extension', name, version: ext.extversion, action: 'unchanged' };
  }
  const engine = await loadEngine();
  return inTransaction(client, async () => {
    const previousVersion = await installedVersion(client);
    const previousHash = await installedHash(client);
    // Same version and same engine SQL: no DDL (which would bump the schema version for nothing).
    if (previousVersion === version && previousHash === objectsHash(engineSql)) {
      return { mode: 'sql', name, version, action: 'unchanged' } as const;
    }
    await engine.installSchema(client);
    await client.query(versionFunctionSql(version, engineSql));
    return {
      mode: 'sql',
      name,
      version,
      action: previousVersion === undefined ? 'installed' : 'replaced',
      previousVersion,
    } as const;
  });
}

/** The version graphql.strata_version() reports, if the objects are installed. */
export async function installedVersion(client: pg.ClientBase): Promise<string | undefined> {
  const { ok } = firstRow(
    await client.query<{ ok: boolean }>(
      `select to_regprocedure('graphql.strata_version()') is not null as ok`,
    ),
    'to_regprocedure()',
  );
  if (!ok) return undefined;
  return firstRow(
    await client.query<{ v: string }>('select graphql.strata_version() as v'),
    'graphql.strata_version()',
  ).v;
}

async function chosenDir(
  client: pg.ClientBase,
  option: InstallOptions['extensionDir'],
): Promise<string | undefined> {
  if (option === 'auto') return serverExtensionDir(client);
  if (option === 'embedded') {
    const dir = await serverExtensionDir(client);
    return dir !== undefined && resolve(dir) === resolve(await embeddedExtensionDir()) ? dir : undefined;
  }
  return option || undefined;
}

export async function installGraphQL(
  client: pg.ClientBase,
  opts: InstallOptions = {},
): Promise<InstallReport> {
  const name = opts.name ?? DEFAULT_EXTENSION_NAME;
  const version = opts.version ?? STRATA_VERSION;
  checkExtensionName(name, version);
  const engineSql = await engineObjectsSql();
  const dir = await chosenDir(client, opts.extensionDir);
  if (dir && isWritableDir(dir)) {
    const undo = writeExtensionFiles(dir, name, version, engineSql);
    const avail = await availability(client, name);
    if (avail?.default_version === version) return installExtension(client, name, version, engineSql);
    // The folder is not the one this server reads (another machine's): leave it as it was.
    undo();
    if (opts.extensionDir !== 'auto' && opts.extensionDir !== 'embedded')
      throw new Error(`PostgreSQL does not see the extension files written to ${dir}`);
  } else if (dir && opts.extensionDir !== 'auto' && opts.extensionDir !== 'embedded') {
    throw new Error(`the extension folder ${dir} is not writable`);
  }
  return installPlain(client, name, version, engineSql);
}

/** A project bootstrap hook (like graphql/extension/bootstrap-hook.ts) installing the objects the same way. */
export function graphqlInstallHook(opts: InstallOptions = {}): (client: pg.ClientBase) => Promise<void> {
  return async (client) => {
    const report = await installGraphQL(client, opts);
    if (report.warning) console.warn(`[strata graphql] ${report.warning}`);
  };
}
