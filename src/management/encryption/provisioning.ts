/**
 * Root keys for new and existing projects: every API process listens on the platform database
 * channel `strata_project_created` (a trigger on `projects`, sql/platform/0012) and generates the
 * new project's root key at once, installing its vault key; on start (and after a lost listener
 * connection is re-established) it also provisions projects that have none yet. Concurrent
 * processes agree through the table's primary key (only the first insert wins). Whatever this
 * misses is still generated on first use (GET pgsodium).
 */
import pg from 'pg';
import type { Platform } from '../../platform/platform.js';
import { withDatabase } from '../../db/pool.js';
import { ensureRootKey } from './root-key.js';
import { projectsWithoutRootKey } from './root-key-store.js';

export interface Provisioner {
  close(): Promise<void>;
}

const CHANNEL = 'strata_project_created';
const RECONNECT_MS = 2_000;

export async function startRootKeyProvisioning(
  platform: Platform,
  log: (m: string) => void,
): Promise<Provisioner> {
  const pending = new Set<Promise<void>>();
  let closed = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;

  const provision = (ref: string) => {
    const p = ensureRootKey(platform, ref).then(
      () => undefined,
      (err: unknown) =>
        log(
          `root key provisioning for project ${ref} failed: ${err instanceof Error ? err.message : String(err)}`,
        ),
    );
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  const sweep = async () => {
    for (const ref of await projectsWithoutRootKey(platform.pool)) provision(ref);
  };

  const scheduleReconnect = () => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      connect().catch((err: unknown) => {
        log(`root key listener: ${err instanceof Error ? err.message : String(err)}`);
        scheduleReconnect();
      });
    }, RECONNECT_MS);
    timer.unref();
  };

  async function connect(): Promise<void> {
    const c = new pg.Client({
      connectionString: withDatabase(platform.servers.primary.url, platform.platformDatabase),
      application_name: 'strata-root-keys',
    });
    c.on('error', (err) => log(`root key listener: ${err.message}`));
    c.on('end', () => {
      if (client === c) client = undefined;
      scheduleReconnect();
    });
    c.on('notification', (n) => {
      if (n.channel === CHANNEL && n.payload) provision(n.payload);
    });
    await c.connect();
    try {
      await c.query(`listen ${CHANNEL}`);
    } catch (err) {
      await c.end().catch(() => {});
      throw err;
    }
    if (closed) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    await sweep();
  }

  // A platform database hiccup at start must not keep the API from starting: retry in the background.
  await connect().catch((err: unknown) => {
    log(`root key listener: ${err instanceof Error ? err.message : String(err)}`);
    scheduleReconnect();
  });
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await client?.end().catch(() => {});
      await Promise.allSettled([...pending]);
    },
  };
}
