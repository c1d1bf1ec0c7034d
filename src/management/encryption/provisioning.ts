/**
 * Root keys for new and existing projects: every API process listens on the platform database
 * channel `strata_project_created` (a trigger on `projects`, sql/platform/0012) and generates the
 * new project's root key at once, installing its vault key; at start it also provisions projects
 * that have none yet (created before this feature). Concurrent processes agree through the
 * table's primary key (only the first insert wins).
 */
import pg from 'pg';
import type { Platform } from '../../platform/platform.js';
import { withDatabase } from '../../db/pool.js';
import { ensureRootKey } from './root-key.js';

export interface Provisioner {
  close(): Promise<void>;
}

function provision(platform: Platform, ref: string, log: (m: string) => void): Promise<void> {
  return ensureRootKey(platform, ref).then(
    () => undefined,
    (err: unknown) => log(`root key provisioning for project ${ref} failed: ${err instanceof Error ? err.message : String(err)}`),
  );
}

export async function startRootKeyProvisioning(platform: Platform, log: (m: string) => void): Promise<Provisioner> {
  const client = new pg.Client({ connectionString: withDatabase(platform.servers.primary.url, platform.platformDatabase), application_name: 'strata-root-keys' });
  client.on('error', (err) => log(`root key listener: ${err.message}`));
  const pending = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };
  client.on('notification', (n) => {
    if (n.channel === 'strata_project_created' && n.payload) track(provision(platform, n.payload, log));
  });
  await client.connect();
  await client.query('listen strata_project_created');
  const { rows } = await platform.pool.query<{ ref: string }>(
    `select p.ref from projects p where p.status <> 'REMOVED'
       and not exists (select 1 from project_root_keys k where k.project_ref = p.ref)`,
  );
  for (const r of rows) track(provision(platform, r.ref, log));
  return {
    async close() {
      await client.end().catch(() => {});
      await Promise.allSettled([...pending]);
    },
  };
}
