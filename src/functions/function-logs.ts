/**
 * Function logs, per project, bounded (oldest dropped first): one `invocation` entry per request
 * (status, duration) and one `log` entry per console line of a worker. Read by
 * GET /v1/projects/{ref}/functions/{function_slug}/logs and `strata logs functions`.
 * With a platform pool the entries go to the platform database (table function_logs), in batches
 * every FLUSH_MS, so every node of a cluster reads every node's entries (a read flushes this
 * node's pending ones first); without one they stay in this process's memory.
 */
import type pg from 'pg';

export interface FunctionLogEntry {
  timestamp: string;
  function_slug: string;
  type: 'invocation' | 'log';
  /** Log lines: info (stdout) or error (stderr); invocations: info, or error for 5xx. */
  level: 'info' | 'error';
  /** Console line, or the invocation's "METHOD /path". */
  message: string;
  status?: number;
  duration_ms?: number;
  /** Set when the platform ended the invocation (WORKER_LIMIT, IDLE_TIMEOUT, BOOT_ERROR...). */
  error_code?: string;
}

/** Longest console line kept (characters). */
const MAX_LINE = 8192;

/** How often a node writes its pending entries, and how many flushes between prunes. */
const FLUSH_MS = 100;
const PRUNE_EVERY = 50;

export class FunctionLogs {
  private readonly byProject = new Map<string, FunctionLogEntry[]>();
  private pending: Array<{ ref: string; entry: FunctionLogEntry }> = [];
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private flushes = 0;

  constructor(
    private readonly limit: number,
    private readonly pool?: pg.Pool,
  ) {}

  add(ref: string, entry: Omit<FunctionLogEntry, 'timestamp'>): void {
    const message = entry.message.length > MAX_LINE ? `${entry.message.slice(0, MAX_LINE)}…` : entry.message;
    // Written out rather than spread: one object of one shape per entry (a log line per call).
    const full: FunctionLogEntry = {
      timestamp: new Date().toISOString(),
      function_slug: entry.function_slug,
      type: entry.type,
      level: entry.level,
      message,
    };
    if (entry.status !== undefined) full.status = entry.status;
    if (entry.duration_ms !== undefined) full.duration_ms = entry.duration_ms;
    if (entry.error_code !== undefined) full.error_code = entry.error_code;
    if (this.pool) {
      this.pending.push({ ref, entry: full });
      this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
      this.timer.unref();
      return;
    }
    let list = this.byProject.get(ref);
    if (!list) {
      list = [];
      this.byProject.set(ref, list);
    }
    list.push(full);
    if (list.length > this.limit) list.splice(0, list.length - this.limit);
  }

  /** Oldest first; optionally one function's entries only, and at most the last `limit`. */
  async read(ref: string, slug?: string, limit?: number): Promise<FunctionLogEntry[]> {
    if (!this.pool) {
      const list = (this.byProject.get(ref) ?? []).filter((e) => !slug || e.function_slug === slug);
      return limit === undefined ? list : list.slice(-limit);
    }
    await this.flush();
    const { rows } = await this.pool.query<{ entry: FunctionLogEntry }>(
      `select entry from function_logs where project_ref = $1 and ($2::text is null or function_slug = $2)
       order by id desc limit $3`,
      [ref, slug ?? null, Math.min(limit ?? this.limit, this.limit)],
    );
    return rows.map((r) => r.entry).reverse();
  }

  /** Writes the pending entries (one statement), then now and then trims each project to `limit`. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    const pool = this.pool;
    if (!pool || batch.length === 0) return this.flushing;
    this.flushing = this.flushing.then(async () => {
      try {
        // One JSON document for the whole batch: serialized natively, parsed by PostgreSQL, where
        // arrays of JSON texts cost node-postgres an escaping pass over every character.
        await pool.query(
          `insert into function_logs (project_ref, function_slug, entry)
           select b->>'ref', b->'entry'->>'function_slug', b->'entry'
           from jsonb_array_elements($1::jsonb) with ordinality as t(b, n) order by n`,
          [JSON.stringify(batch)],
        );
        if (++this.flushes % PRUNE_EVERY === 0) await this.prune(pool, [...new Set(batch.map((b) => b.ref))]);
      } catch {
        // Logs are best effort: a platform database hiccup loses this batch, never a request.
      }
    });
    return this.flushing;
  }

  private async prune(pool: pg.Pool, refs: string[]): Promise<void> {
    for (const ref of refs)
      await pool.query(
        `delete from function_logs where project_ref = $1 and id < (
           select id from function_logs where project_ref = $1 order by id desc offset $2 limit 1)`,
        [ref, this.limit - 1],
      );
  }

  async forget(ref: string): Promise<void> {
    this.byProject.delete(ref);
    await this.pool?.query('delete from function_logs where project_ref = $1', [ref]).catch(() => {});
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
