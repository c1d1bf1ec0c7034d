/**
 * `strata projects move <ref> --to <server>`: moves a project's database to another server of a
 * cluster (project-move.ts). Runs with the nodes' environment (DATABASE_URL, STRATA_DB_SERVERS,
 * STRATA_PLATFORM_KEY(_FILE), STRATA_PLATFORM_DATABASE); the running nodes follow at once.
 */
import { parseArgs } from 'node:util';
import { configFromEnv, parseDbServers } from '../config.js';
import { createPool, withDatabase } from '../db/pool.js';
import { ClusterEvents } from './cluster-events.js';
import { DbServers } from './db-servers.js';
import { moveProject } from './project-move.js';

export const PROJECTS_HELP = `Usage:
  strata projects move REF --to SERVER   move a project's database to another server (read-only meanwhile)

Options: --database-url URL (the platform's primary server; default DATABASE_URL),
--db-servers id=URL,... (default STRATA_DB_SERVERS), --platform-database NAME.
Needs pg_dump / pg_restore at least as new as the source server (PATH or STRATA_PG_BIN_DIR) and the
nodes' STRATA_PLATFORM_KEY or STRATA_PLATFORM_KEY_FILE.`;

export async function projectsCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      to: { type: 'string' },
      'database-url': { type: 'string' },
      'db-servers': { type: 'string' },
      'platform-database': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [action, ref] = positionals;
  if (values.help || !action) {
    console.log(PROJECTS_HELP);
    return;
  }
  if (action !== 'move') throw new Error(`unknown projects action "${action}"\n\n${PROJECTS_HELP}`);
  if (!ref || !values.to)
    throw new Error(`strata projects move needs REF and --to SERVER\n\n${PROJECTS_HELP}`);
  const config = configFromEnv();
  const primaryUrl = values['database-url'] ?? config.databaseUrl;
  if (!primaryUrl)
    throw new Error('strata projects move needs DATABASE_URL (or --database-url): the primary server');
  const platformKey = config.shared.platformKey;
  if (!platformKey)
    throw new Error("strata projects move needs the nodes' STRATA_PLATFORM_KEY or STRATA_PLATFORM_KEY_FILE");
  const extras = values['db-servers'] ? parseDbServers(values['db-servers']) : config.extraDbServers;
  const servers = new DbServers({ id: 'primary', url: primaryUrl, managed: false }, extras);
  const platformUrl = withDatabase(
    primaryUrl,
    values['platform-database'] ?? config.platformDatabase ?? 'strata_platform',
  );
  const pool = createPool(platformUrl, { max: 2, applicationName: 'strata-cli' });
  const log = (line: string) => console.log(line);
  try {
    await moveProject(ref, values.to, {
      platformPool: pool,
      servers,
      events: new ClusterEvents(platformUrl, pool, log),
      platformKey,
      pgBinDir: config.pgBinDir,
      log,
    });
  } finally {
    await pool.end();
  }
  console.log(`Project ${ref} moved to ${values.to}.`);
}
