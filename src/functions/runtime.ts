/**
 * The Edge Functions runtime: per function a small pool of Deno workers (worker.ts), bounded
 * globally, started on first invocation and reaped when idle; a worker whose code or environment
 * is outdated is retired (stopped once idle). Per-invocation CPU time and each worker's resident
 * memory are sampled from /proc, its temp folder's size every 200 ms; a worker over a limit is
 * killed. When the platform is full, a project below its fair share of workers takes one from the
 * project holding the most. `close()` kills every worker (no orphans).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FunctionsConfig } from '../config.js';
import type { FunctionLogs } from './function-logs.js';
import { seedDenoDir } from './deno-seed.js';
import { BOOTSTRAP_SOURCE } from './worker-bootstrap.js';
import { FunctionWorker, SOCKET_NAME, type WorkerEnd, type WorkerSpec } from './worker.js';
import { folderUsage, workerUser, ensureTraversable } from './worker-sandbox.js';

export class CapacityError extends Error {}

/** What a worker needs besides the platform's folders: code location, env, version. */
export interface FunctionSpec {
  ref: string;
  slug: string;
  fingerprint: string;
  bundleDir: string;
  entryPath: string;
  importMapPath?: string;
  env: Record<string, string>;
}

/** One invocation's claim on a worker; `release()` exactly once (in a finally). */
export interface Lease {
  worker: FunctionWorker;
  /**
   * Calls `fn` with the reason when the worker ends (killed over a limit, crashed) while leased,
   * at once if it has ended already; at most one listener, dropped by `release()`.
   */
  onEnd(fn: (why: WorkerEnd) => void): void;
  release(): void;
}

const SAMPLE_MS = 50;
/**
 * Resident memory of an idle Deno worker (the runtime itself: binary, V8, caches), allowed on top
 * of the function's memory limit.
 */
const RUNTIME_RSS_MB = 96;
/**
 * How often every worker's temp folder is measured: a worker writing many files goes over its temp
 * space by at most what it writes in this time (one file never: RLIMIT_FSIZE).
 */
const TMP_CHECK_MS = 200;
/** Longest Unix socket path (sun_path is 108 bytes with its NUL; kept below). */
const MAX_SOCKET_PATH = 100;

export class FunctionsRuntime {
  private readonly pools = new Map<string, FunctionWorker[]>();
  private readonly leases = new Set<{ worker: FunctionWorker; cpuStart: number }>();
  /** Pre-started workers not leased yet: their CPU counts from their start (see warm()). */
  private readonly warming = new Map<FunctionWorker, { worker: FunctionWorker; cpuStart: number }>();
  private readonly bootstrapPath: string;
  /** Where workers' temp folders (and sockets) are made: short enough for a socket path. */
  private readonly tmpRoot: string;
  /** The unprivileged user workers run as when the platform is root. */
  private readonly user = workerUser();
  private readonly timer: NodeJS.Timeout;
  private lastReap = Date.now();
  private lastTmpCheck = Date.now();
  private closed = false;

  constructor(
    readonly config: FunctionsConfig,
    readonly rootDir: string,
    readonly denoBin: string,
    readonly logs: FunctionLogs,
  ) {
    mkdirSync(join(rootDir, 'deno-dir'), { recursive: true });
    mkdirSync(join(rootDir, 'tmp'), { recursive: true });
    this.tmpRoot =
      join(rootDir, 'tmp', 'x'.repeat(16), SOCKET_NAME).length <= MAX_SOCKET_PATH
        ? join(rootDir, 'tmp')
        : mkdtempSync(join(tmpdir(), 'strata-fn-'));
    this.bootstrapPath = join(rootDir, 'worker-bootstrap.mjs');
    writeFileSync(this.bootstrapPath, BOOTSTRAP_SOURCE);
    if (this.user) {
      // The worker's user reads its bundle, the bootstrap and the Deno cache (not listed:
      // search bit only on the folders above), and nothing else of the platform's.
      ensureTraversable(join(rootDir, 'deno-dir'));
      ensureTraversable(this.tmpRoot);
      chmodSync(this.tmpRoot, 0o711);
      chmodSync(join(rootDir, 'tmp'), 0o711);
    }
    this.timer = setInterval(() => this.tick(), SAMPLE_MS);
    this.timer.unref();
  }

  get denoDir(): string {
    return join(this.rootDir, 'deno-dir');
  }

  private seeding?: Promise<void>;

  /**
   * The install-time seed (deno-seed.ts) copied into the Deno cache where it lacks it: once per
   * runtime (again after a failure, which leaves the import check to name what is missing).
   */
  seedCache(): Promise<void> {
    this.seeding ??= seedDenoDir(this.config.denoSeedDir, this.denoDir).then(
      () => {},
      () => {
        this.seeding = undefined;
      },
    );
    return this.seeding;
  }

  /** The proxy settings of the deploy's module download, as Deno reads them. */
  moduleEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    const { httpsProxy, httpProxy, noProxy } = this.config.moduleProxy ?? {};
    if (httpsProxy) env.HTTPS_PROXY = httpsProxy;
    if (httpProxy) env.HTTP_PROXY = httpProxy;
    if (noProxy) env.NO_PROXY = noProxy;
    return env;
  }

  /**
   * A worker for the function (started if needed) with one invocation counted on it: the lease
   * itself when the worker is ready (no promise on a warm call), else a promise of it. Throws (or
   * rejects) CapacityError or WorkerEndedError.
   */
  lease(spec: FunctionSpec): Lease | Promise<Lease> {
    if (this.closed) throw new CapacityError('The functions runtime is shutting down');
    const key = `${spec.ref}/${spec.slug}`;
    const worker = this.pick(key, spec);
    if (this.warming.size > 0) this.warming.delete(worker);
    worker.idleCpuMark = undefined;
    worker.inflight++;
    worker.lastUsed = Date.now();
    const lease = new WorkerLease(worker, this.leases);
    if (!worker.isReady) return this.whenReady(lease);
    if (!worker.alive) {
      lease.release();
      throw new WorkerEndedError(worker.ended as WorkerEnd);
    }
    // Up to one sampling period of other invocations' CPU may count against this one: a bound
    // error of SAMPLE_MS against a budget of seconds, for no /proc read per invocation.
    lease.count(worker.recentCpuMs(SAMPLE_MS) ?? 0);
    return lease;
  }

  /** A worker still starting: waits for it to be ready, or for its end. */
  private async whenReady(lease: WorkerLease): Promise<Lease> {
    const worker = lease.worker;
    let unlisten = () => {};
    try {
      const ended = new Promise<never>((_, reject) => {
        unlisten = worker.onEnd((why) => reject(why));
      });
      await Promise.race([worker.ready, ended]);
    } catch (err) {
      lease.release();
      throw typeof err === 'string' ? new WorkerEndedError(err as WorkerEnd) : err;
    } finally {
      unlisten();
    }
    lease.count(worker.recentCpuMs(SAMPLE_MS) ?? 0);
    return lease;
  }

  private pick(key: string, spec: FunctionSpec): FunctionWorker {
    let pool = this.pools.get(key);
    if (!pool) {
      pool = [];
      this.pools.set(key, pool);
    } else if (!pool.every((w) => w.alive)) {
      pool = pool.filter((w) => w.alive);
      this.pools.set(key, pool);
    }
    // No arrays made per invocation: the usual pool is one or two current workers.
    let best: FunctionWorker | undefined;
    let current = 0;
    for (const w of pool) {
      if (!w.retired && w.spec.fingerprint !== spec.fingerprint) this.retire(w);
      if (w.retired) continue;
      current++;
      if (!best || w.inflight < best.inflight) best = w;
    }
    if (best && (best.inflight < this.config.workerConcurrency || current >= this.config.poolSize))
      return best;
    if (this.liveCount() >= this.config.maxWorkers && !this.evictIdle() && !this.preempt(spec.ref)) {
      if (best) return best;
      throw new CapacityError('Too many function workers are running; try again later');
    }
    const worker = this.spawn(key, spec);
    pool.push(worker);
    return worker;
  }

  /**
   * Starts a worker for the function ahead of its first request, unless one with this code and
   * environment runs already or the global limit is reached (never evicts). Until its first lease
   * the CPU budget counts from its start, so a module that loops at import is still killed.
   */
  warm(spec: FunctionSpec): void {
    if (this.closed) return;
    const key = `${spec.ref}/${spec.slug}`;
    const pool = (this.pools.get(key) ?? []).filter((w) => w.alive);
    if (pool.some((w) => !w.retired && w.spec.fingerprint === spec.fingerprint)) return;
    if (this.liveCount() >= this.config.maxWorkers) return;
    const worker = this.spawn(key, spec);
    pool.push(worker);
    this.pools.set(key, pool);
    this.warming.set(worker, { worker, cpuStart: 0 });
    void worker.exited.then(() => this.warming.delete(worker));
  }

  /**
   * All workers are busy: when the project asking holds fewer than its fair share (max workers ÷
   * projects holding workers, itself counted) and another holds more, that project's least busy
   * worker is stopped (its invocations end 503) so the one asking gets a slot. False when none.
   */
  private preempt(ref: string): boolean {
    const held = new Map<string, FunctionWorker[]>();
    for (const [key, pool] of this.pools) {
      const owner = key.slice(0, key.indexOf('/'));
      for (const w of pool)
        if (w.alive) {
          const list = held.get(owner) ?? [];
          list.push(w);
          held.set(owner, list);
        }
    }
    const projects = held.size + (held.has(ref) ? 0 : 1);
    const share = Math.max(1, Math.floor(this.config.maxWorkers / projects));
    if ((held.get(ref)?.length ?? 0) >= share) return false;
    let richest: FunctionWorker[] | undefined;
    for (const [owner, list] of held)
      if (owner !== ref && list.length > share && (!richest || list.length > richest.length)) richest = list;
    if (!richest) return false;
    let victim: FunctionWorker | undefined;
    for (const w of richest) if (!victim || w.inflight < victim.inflight) victim = w;
    if (!victim) return false;
    void victim.kill('preempted');
    return true;
  }

  private spawn(key: string, spec: FunctionSpec): FunctionWorker {
    // Short (a socket path must fit sun_path), unguessable, private to the worker's user.
    const tmpDir = join(this.tmpRoot, randomBytes(8).toString('hex'));
    mkdirSync(tmpDir, { mode: 0o700 });
    if (this.user) chownSync(tmpDir, this.user.uid, this.user.gid);
    const ws: WorkerSpec = {
      key,
      fingerprint: spec.fingerprint,
      denoBin: this.denoBin,
      denoDir: this.denoDir,
      bootstrapPath: this.bootstrapPath,
      bundleDir: spec.bundleDir,
      entryPath: spec.entryPath,
      importMapPath: spec.importMapPath,
      tmpDir,
      env: spec.env,
      memoryMb: this.config.memoryMb,
      fileSizeLimit: this.config.tmpMb * 1024 * 1024,
      user: this.user,
      bootTimeoutMs: 30_000,
    };
    const worker = new FunctionWorker(ws, (level, line) =>
      this.logs.add(spec.ref, { function_slug: spec.slug, type: 'log', level, message: line }),
    );
    worker.onEnd((why) => {
      if (
        why === 'cpu' ||
        why === 'memory' ||
        why === 'disk' ||
        why === 'preempted' ||
        why === 'crash' ||
        why === 'boot'
      )
        this.logs.add(spec.ref, {
          function_slug: spec.slug,
          type: 'log',
          level: 'error',
          message: `worker stopped: ${endMessage(why)}`,
        });
    });
    void worker.exited.then(() => {
      rmSync(tmpDir, { recursive: true, force: true });
      const pool = this.pools.get(key);
      if (pool) {
        const rest = pool.filter((w) => w !== worker);
        if (rest.length) this.pools.set(key, rest);
        else this.pools.delete(key);
      }
    });
    return worker;
  }

  /** Kills every worker of the project (it is being deleted); resolves once they are gone. */
  async stopProject(ref: string): Promise<void> {
    const gone: Promise<void>[] = [];
    for (const [key, pool] of this.pools)
      if (key.startsWith(`${ref}/`)) for (const w of pool) gone.push(w.kill('shutdown'));
    await Promise.all(gone);
  }

  /** True while a live worker runs the bundle in `dir`. */
  runsBundle(dir: string): boolean {
    for (const pool of this.pools.values())
      for (const w of pool) if (w.alive && w.spec.bundleDir === dir) return true;
    return false;
  }

  /** Live workers, the invocations in flight on them, and the connections open to them (all functions). */
  stats(): { workers: number; inflight: number; connections: number } {
    let workers = 0;
    let inflight = 0;
    let connections = 0;
    for (const pool of this.pools.values())
      for (const w of pool)
        if (w.alive) {
          workers++;
          inflight += w.inflight;
          connections += w.pool?.stats.connected ?? 0;
        }
    return { workers, inflight, connections };
  }

  private liveCount(): number {
    let n = 0;
    for (const pool of this.pools.values()) for (const w of pool) if (w.alive) n++;
    return n;
  }

  /** Stops the least recently used idle worker; false when every worker is busy. */
  private evictIdle(): boolean {
    let victim: FunctionWorker | undefined;
    for (const pool of this.pools.values())
      for (const w of pool)
        if (w.alive && w.inflight === 0 && (!victim || w.lastUsed < victim.lastUsed)) victim = w;
    if (!victim) return false;
    void victim.kill('idle');
    return true;
  }

  private retire(w: FunctionWorker): void {
    w.retired = true;
    if (w.inflight === 0) void w.kill('recycled');
  }

  /** Retires the project's workers (or one function's): new invocations start fresh ones. */
  recycle(ref: string, slug?: string): string[] {
    const slugs: string[] = [];
    for (const [key, pool] of this.pools)
      if (key.startsWith(`${ref}/`) && (!slug || key === `${ref}/${slug}`)) {
        if (pool.some((w) => w.alive && !w.retired)) slugs.push(key.slice(ref.length + 1));
        for (const w of pool) this.retire(w);
      }
    return slugs;
  }

  private get rssLimit(): number {
    return (this.config.memoryMb + RUNTIME_RSS_MB) * 1024 * 1024;
  }

  private tick(): void {
    const now = new Map<FunctionWorker, { cpuMs: number; rssBytes: number } | undefined>();
    for (const lease of [...this.leases, ...this.warming.values()]) {
      const w = lease.worker;
      if (!w.alive) continue;
      if (!now.has(w)) now.set(w, w.usage());
      const u = now.get(w);
      if (u === undefined) continue;
      if (u.rssBytes > this.rssLimit) void w.kill('memory');
      else if (u.cpuMs - lease.cpuStart > this.config.cpuBudgetMs) void w.kill('cpu');
    }
    const t = Date.now();
    if (t - this.lastTmpCheck >= TMP_CHECK_MS) {
      this.lastTmpCheck = t;
      const tmpLimit = this.config.tmpMb * 1024 * 1024;
      for (const pool of this.pools.values())
        for (const w of pool)
          if (w.alive && folderUsage(w.spec.tmpDir, tmpLimit) > tmpLimit) void w.kill('disk');
    }
    if (t - this.lastReap < 1000) return;
    this.lastReap = t;
    for (const pool of this.pools.values())
      for (const w of pool) {
        if (!w.alive) continue;
        if (w.inflight === 0 && t - w.lastUsed > this.config.idleTimeoutMs) {
          void w.kill('idle');
          continue;
        }
        // Idle workers too: memory, CPU and temp files a function keeps using after it answered.
        if (!now.has(w)) {
          const u = w.usage();
          if (u && u.rssBytes > this.rssLimit) {
            void w.kill('memory');
            continue;
          }
          if (u && w.inflight === 0 && !this.warming.has(w)) {
            // CPU spent with no invocation in flight (background work) has the same budget.
            if (w.idleCpuMark === undefined) w.idleCpuMark = u.cpuMs;
            else if (u.cpuMs - w.idleCpuMark > this.config.cpuBudgetMs) {
              void w.kill('cpu');
            }
          }
        }
      }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    const all = [...this.pools.values()].flat();
    this.pools.clear();
    await Promise.all(all.map((w) => w.kill('shutdown')));
    if (this.tmpRoot !== join(this.rootDir, 'tmp')) rmSync(this.tmpRoot, { recursive: true, force: true });
  }
}

/** A Lease: one object per invocation (no closures), counted in the runtime's CPU sampling once ready. */
class WorkerLease implements Lease {
  /** The invocation's entry in the runtime's sampled leases (CPU at its start), once counted. */
  cpuStart = 0;
  private counted = false;
  private released = false;
  private unlisten?: () => void;

  constructor(
    readonly worker: FunctionWorker,
    private readonly leases: Set<{ worker: FunctionWorker; cpuStart: number }>,
  ) {}

  count(cpuStart: number): void {
    this.cpuStart = cpuStart;
    this.counted = true;
    this.leases.add(this);
  }

  onEnd(fn: (why: WorkerEnd) => void): void {
    if (this.released) return;
    this.unlisten?.();
    this.unlisten = this.worker.onEnd(fn);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.unlisten?.();
    if (this.counted) this.leases.delete(this);
    const worker = this.worker;
    worker.inflight--;
    worker.lastUsed = Date.now();
    if (worker.retired && worker.inflight === 0) void worker.kill('recycled');
  }
}

export class WorkerEndedError extends Error {
  constructor(readonly why: WorkerEnd) {
    super(`worker stopped: ${endMessage(why)}`);
  }
}

export function endMessage(why: WorkerEnd): string {
  switch (why) {
    case 'cpu':
      return 'CPU time limit reached';
    case 'memory':
      return 'memory limit reached';
    case 'disk':
      return 'temp space limit reached';
    case 'preempted':
      return 'stopped to give another project its share of workers';
    case 'timeout':
      return 'wall clock time limit reached';
    case 'boot':
      return 'did not start in time';
    case 'crash':
      return 'exited unexpectedly';
    default:
      return why;
  }
}
