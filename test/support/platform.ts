/**
 * A whole platform (HTTP server + platform database + default project) for a test file, on the
 * run's PostgreSQL, with its own databases and data folder; `close()` removes all of it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { configFromEnv, type StrataConfig } from '../../src/config.js';
import { startPlatform, type RunningPlatform } from '../../src/server.js';
import type { PlatformOptions } from '../../src/platform/platform.js';
import { withClient, withDatabase } from '../../src/db/pool.js';
import { quoteIdent } from '../../src/db/sql-text.js';
import { serverUrl, authenticatorPassword } from './database.js';

export interface TestPlatform extends RunningPlatform {
  dataDir: string;
  config: StrataConfig;
}

export async function startTestPlatform(
  overrides: Partial<StrataConfig> = {},
  options: PlatformOptions = {},
): Promise<TestPlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), 'strata-test-'));
  const suffix = randomBytes(5).toString('hex');
  const config: StrataConfig = {
    ...configFromEnv({}),
    dataDir,
    host: '127.0.0.1',
    port: 0,
    databaseUrl: serverUrl(),
    // The console on a free port of its own (its default 54323 is one per machine).
    consolePort: 0,
    // No PostgreSQL router unless a test asks for one (its default port would be shared by every test file).
    poolerPort: undefined,
    ...overrides,
  };
  const platformDatabase = `platform_${suffix}`;
  const running = await startPlatform(config, {
    platformDatabase,
    defaultProjectDatabase: `default_${suffix}`,
    authenticatorPassword,
    ...options,
  });
  const close = running.close.bind(running);
  return {
    ...running,
    dataDir,
    config,
    async close() {
      const dbs = (
        await running.platform.pool
          .query<{ db_name: string; ref: string }>('select db_name, ref from projects')
          .catch(() => ({ rows: [] as { db_name: string; ref: string }[] }))
      ).rows;
      await close();
      await withClient(withDatabase(serverUrl(), 'postgres'), async (c) => {
        for (const d of [...dbs.map((r) => r.db_name), platformDatabase])
          await c.query(`drop database if exists ${quoteIdent(d)} with (force)`);
        // Each project's logins are cluster-wide roles (platform/project-login.ts).
        for (const { ref } of dbs)
          for (const role of [`strata_sql.${ref}`, `postgres.${ref}`])
            await c.query(`drop role if exists ${quoteIdent(role)}`).catch(() => {});
      });
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A second API process on `tp`'s platform database (as a second `strata start` against the same
 * DATABASE_URL would be); `close()` stops only it.
 */
export function startSecondProcess(tp: TestPlatform): Promise<RunningPlatform> {
  return startPlatform(tp.config, { platformDatabase: tp.platform.platformDatabase, authenticatorPassword });
}

/**
 * A platform on a PostgreSQL of its own, not the run's shared server: its embedded one
 * (`databaseUrl` undefined) or the external `databaseUrl` given, for tests that stop or kill that
 * database. Files go to `dataDir`, which the caller removes after `close()`.
 */
export function startStandalonePlatform(
  overrides: Partial<StrataConfig> & { dataDir: string; databaseUrl: string | undefined },
  options: PlatformOptions = {},
): Promise<RunningPlatform> {
  return startPlatform(
    { ...configFromEnv({}), host: '127.0.0.1', port: 0, consolePort: undefined, ...overrides },
    options,
  );
}
