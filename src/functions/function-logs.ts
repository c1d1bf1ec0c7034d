/**
 * Function logs, per project, in memory and bounded (oldest dropped first): one `invocation`
 * entry per request (status, duration) and one `log` entry per console line of a worker.
 * Read by GET /v1/projects/{ref}/functions/{function_slug}/logs and `strata logs functions`.
 */
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

export class FunctionLogs {
  private readonly byProject = new Map<string, FunctionLogEntry[]>();

  constructor(private readonly limit: number) {}

  add(ref: string, entry: Omit<FunctionLogEntry, 'timestamp'>): void {
    let list = this.byProject.get(ref);
    if (!list) {
      list = [];
      this.byProject.set(ref, list);
    }
    const message = entry.message.length > MAX_LINE ? `${entry.message.slice(0, MAX_LINE)}…` : entry.message;
    list.push({ timestamp: new Date().toISOString(), ...entry, message });
    if (list.length > this.limit) list.splice(0, list.length - this.limit);
  }

  /** Oldest first; optionally one function's entries only, and at most the last `limit`. */
  read(ref: string, slug?: string, limit?: number): FunctionLogEntry[] {
    const list = (this.byProject.get(ref) ?? []).filter((e) => !slug || e.function_slug === slug);
    return limit === undefined ? list : list.slice(-limit);
  }

  forget(ref: string): void {
    this.byProject.delete(ref);
  }
}
