/**
 * `strata servers list|drain|undrain`: the PostgreSQL servers projects are placed on
 * (docs/cluster.md). A draining server takes no new projects; the others share them by
 * headroom. Runs against the platform database (DATABASE_URL / --database-url, as `strata users`).
 */
import { parseArgs } from 'node:util';
import { COMMON, type CommonFlags, withPlatformPool } from './cli-platform-db.js';
import { listDbServers, setServerDraining } from './db-server-store.js';

export const SERVERS_HELP = `Usage:
  strata servers list [--json]      servers, their live projects, and whether they are draining
  strata servers drain ID           take no new projects on server ID
  strata servers undrain ID         take new projects on server ID again

Options: --database-url URL (the platform's primary server; default DATABASE_URL),
--platform-database NAME (default STRATA_PLATFORM_DATABASE or strata_platform).`;

export async function serversCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: COMMON, allowPositionals: true });
  const [action, id] = positionals;
  if (values.help || !action) {
    console.log(SERVERS_HELP);
    return;
  }
  const flags: CommonFlags = values;
  if (action === 'list') {
    const rows = await withPlatformPool(flags, listDbServers);
    if (values.json) console.log(JSON.stringify(rows, null, 2));
    else
      for (const r of rows)
        console.log(
          `${r.id.padEnd(20)} ${String(r.projects).padStart(6)} projects${r.draining ? '  (draining)' : ''}`,
        );
    return;
  }
  if (action !== 'drain' && action !== 'undrain')
    throw new Error(`unknown servers action "${action}"\n\n${SERVERS_HELP}`);
  if (!id) throw new Error(`strata servers ${action} needs a server ID\n\n${SERVERS_HELP}`);
  const found = await withPlatformPool(flags, (pool) => setServerDraining(pool, id, action === 'drain'));
  if (!found) throw new Error(`no database server "${id}" (see strata servers list)`);
  console.log(
    action === 'drain' ? `Server ${id} takes no new projects.` : `Server ${id} takes new projects again.`,
  );
}
