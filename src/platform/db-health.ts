/**
 * Whether each PostgreSQL server answers, as health endpoints and `strata status` report it. A
 * check opens a fresh connection and runs `select 1` with a short timeout (a pooled connection
 * could be stale, or all of them busy); results are shared for a moment, so a health endpoint
 * polled hard costs at most one connection per server per `cacheMs`.
 */
import pg from 'pg';
import { withDatabase } from '../db/pool.js';

export interface HealthOptions {
  /** Give up on a check after this long (connect + query). */
  timeoutMs: number;
  /** Reuse a result for this long. */
  cacheMs: number;
}

interface Entry {
  at: number;
  up: boolean;
  pending?: Promise<boolean>;
}

export async function probeDatabase(url: string, timeoutMs: number): Promise<boolean> {
  const client = new pg.Client({
    connectionString: withDatabase(url, 'postgres'),
    application_name: 'strata-health',
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export class DatabaseHealth {
  private readonly entries = new Map<string, Entry>();
  constructor(
    private readonly serverOf: (serverId: string) => { url: string; embedded?: { pid: number | undefined } },
    private readonly options: HealthOptions,
  ) {}

  /** True when the server answers now (or answered within the last `cacheMs`). */
  async isUp(serverId = 'primary'): Promise<boolean> {
    const server = this.serverOf(serverId);
    // An embedded server known to be down (died, being restarted) needs no probe.
    if (server.embedded && server.embedded.pid === undefined) {
      this.entries.delete(serverId);
      return false;
    }
    const e = this.entries.get(serverId);
    const now = Date.now();
    if (e?.pending !== undefined) return await e.pending;
    if (e && now - e.at < this.options.cacheMs) return e.up;
    const pending = probeDatabase(server.url, this.options.timeoutMs).then((up) => {
      this.entries.set(serverId, { at: Date.now(), up });
      return up;
    });
    this.entries.set(serverId, { at: e?.at ?? 0, up: e?.up ?? true, pending });
    return await pending;
  }

  /** Forget the shared result (after a request saw the server go away or come back). */
  invalidate(serverId = 'primary'): void {
    const e = this.entries.get(serverId);
    if (e && !e.pending) this.entries.delete(serverId);
  }
}
