/**
 * Cache invalidation between the API processes sharing one platform database (cluster mode,
 * docs/cluster.md): a change made through one process (a project deleted, a
 * function deployed, secrets set, a custom hostname or S3 access key changed) is announced with
 * NOTIFY on the platform database channel `strata_invalidate`; every process LISTENs and drops the
 * named cache entries. The same channel carries requests to let go of a resumable upload's lock
 * ('tus-release', storage/tus/pg-locker.ts). A process that lost its listener connection cannot know what it missed: it
 * flushes every cache when the connection is back (retried every RECONNECT_MS).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

export const INVALIDATE_CHANNEL = 'strata_invalidate';
const RECONNECT_MS = 2_000;

/** What changed: the kind of cache, the project, and optionally one key within it (slug, hostname, access key). */
export interface ClusterEvent {
  kind: 'project' | 'functions' | 'hostname' | 's3-key' | 'tus-release';
  ref: string;
  key?: string;
}

type Handler = (event: ClusterEvent | undefined) => void;

export class ClusterEvents {
  /** This process, so that it skips its own announcements (it invalidated already). */
  private readonly origin = randomUUID();
  private readonly handlers = new Set<Handler>();
  private client?: pg.Client;
  private timer?: NodeJS.Timeout;
  private closed = false;
  /** Why the live listener went away, said when the reconnect runs. */
  private lostWith?: string;
  private everConnected = false;

  constructor(
    private readonly connectionString: string,
    private readonly publisher: pg.Pool,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Calls `fn` with each event another process announces, and with `undefined` when every cache
   * must be flushed (the listener reconnected after a loss). Returns the unsubscribe function.
   */
  subscribe(fn: Handler): () => void {
    this.handlers.add(fn);
    return () => this.handlers.delete(fn);
  }

  /** Announces a change to the other processes; never throws (their caches expire on their own bounds). */
  async publish(event: ClusterEvent): Promise<void> {
    const payload = JSON.stringify({ ...event, origin: this.origin });
    await this.publisher
      .query('select pg_notify($1, $2)', [INVALIDATE_CHANNEL, payload])
      .catch((err: unknown) =>
        this.log(`cluster invalidation not sent: ${err instanceof Error ? err.message : String(err)}`),
      );
  }

  async start(): Promise<void> {
    await this.connect().catch((err: unknown) => {
      this.log(`cluster listener: ${err instanceof Error ? err.message : String(err)}`);
      this.scheduleReconnect();
    });
  }

  private emit(event: ClusterEvent | undefined): void {
    for (const h of this.handlers) {
      try {
        h(event);
      } catch (err) {
        this.log(`cluster invalidation handler: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  private scheduleReconnect(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.lostWith) this.log(`cluster listener: ${this.lostWith}; reconnecting`);
      this.lostWith = undefined;
      this.connect().catch((err: unknown) => {
        this.log(`cluster listener: ${err instanceof Error ? err.message : String(err)}`);
        this.scheduleReconnect();
      });
    }, RECONNECT_MS);
    this.timer.unref();
  }

  private async connect(): Promise<void> {
    const c = new pg.Client({
      connectionString: this.connectionString,
      application_name: 'strata-invalidate',
    });
    // Said only when the reconnect runs: a server stopping with the platform (Ctrl-C reaches an
    // embedded server too) is not worth a line, as the platform closes before the retry is due.
    c.on('error', (err) => {
      this.lostWith ??= err.message;
    });
    c.on('end', () => {
      if (this.client === c) this.client = undefined;
      this.scheduleReconnect();
    });
    c.on('notification', (n) => {
      if (n.channel !== INVALIDATE_CHANNEL || !n.payload) return;
      const event = parseEvent(n.payload);
      if (event && event.origin !== this.origin) this.emit(event);
    });
    await c.connect();
    try {
      await c.query(`listen ${INVALIDATE_CHANNEL}`);
    } catch (err) {
      await c.end().catch(() => {});
      throw err;
    }
    if (this.closed) {
      await c.end().catch(() => {});
      return;
    }
    this.client = c;
    // Whatever was announced while no listener was connected is lost: flush everything.
    if (this.everConnected) this.emit(undefined);
    this.everConnected = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.client?.end().catch(() => {});
  }
}

const KINDS = new Set(['project', 'functions', 'hostname', 's3-key', 'tus-release']);

function parseEvent(payload: string): (ClusterEvent & { origin?: string }) | undefined {
  try {
    const v = JSON.parse(payload) as Record<string, unknown>;
    if (typeof v.kind !== 'string' || !KINDS.has(v.kind) || typeof v.ref !== 'string') return undefined;
    return {
      kind: v.kind as ClusterEvent['kind'],
      ref: v.ref,
      key: typeof v.key === 'string' ? v.key : undefined,
      origin: typeof v.origin === 'string' ? v.origin : undefined,
    };
  } catch {
    return undefined;
  }
}
