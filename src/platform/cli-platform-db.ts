/**
 * The platform database as the administration commands (`strata users|tokens|servers`) reach it:
 * the one of the running `strata start` of the data folder (its status file), or the server of
 * `--database-url` / DATABASE_URL; and the flags that say which.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { configFromEnv } from '../config.js';
import { createPool, withDatabase } from '../db/pool.js';
import { pidAlive } from '../db/pid.js';

export const DEFAULT_PLATFORM_DATABASE = 'strata_platform';

export const COMMON = {
  'data-dir': { type: 'string' },
  'database-url': { type: 'string' },
  'platform-database': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface CommonFlags {
  'data-dir'?: string;
  'database-url'?: string;
  'platform-database'?: string;
}

/** The platform database's URL for these flags; throws with what to do when there is none. */
function platformDatabaseUrl(flags: CommonFlags): string {
  const config = configFromEnv();
  const database = flags['platform-database'] ?? config.platformDatabase ?? DEFAULT_PLATFORM_DATABASE;
  const server = flags['database-url'] ?? config.databaseUrl;
  if (server) return withDatabase(server, database);
  const dataDir = flags['data-dir'] ? resolve(flags['data-dir']) : config.dataDir;
  const file = join(dataDir, 'status.json');
  const info = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as { superuser_db_url?: string; db_url?: string; pid?: number })
    : undefined;
  // db_url: a status.json written before superuser_db_url existed (db_url was the superuser's then).
  const url = info?.superuser_db_url ?? info?.db_url;
  if (!url || !info?.pid || !pidAlive(info.pid))
    throw new Error(
      `Strata is not running in ${dataDir}: start it (npm start) first, or pass --database-url for an external server`,
    );
  return withDatabase(url, database);
}

export async function withPlatformPool<T>(
  flags: CommonFlags,
  work: (pool: ReturnType<typeof createPool>) => Promise<T>,
) {
  const pool = createPool(platformDatabaseUrl(flags), { max: 1, applicationName: 'strata-cli' });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}
