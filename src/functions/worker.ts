/**
 * One Deno process running one function version (see worker-bootstrap.ts): spawned with the
 * function's permission set and environment (its own identifier-named secrets only), as an
 * unprivileged user when the platform is root, with a file-size limit; listens on a Unix socket in
 * its temp folder; serves invocations until it is reaped, recycled or killed over a limit. Its
 * console output goes to `onLog`.
 */
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Pool } from 'undici';
import { workerEnvironment } from './environment-names.js';
import { READY_MARKER } from './worker-bootstrap.js';

/** Why a worker stopped: a limit (cpu, memory, timeout), a crash, or the platform's choice. */
export type WorkerEnd =
  | 'cpu'
  | 'memory'
  | 'disk'
  | 'timeout'
  | 'crash'
  | 'idle'
  | 'recycled'
  | 'shutdown'
  | 'preempted'
  | 'boot';

/** The socket a worker listens on, in its temp folder. */
export const SOCKET_NAME = '.worker.sock';

export interface WorkerSpec {
  /** `ref/slug`: which function. */
  key: string;
  /** Changes when the code or the environment changes: a worker with another one is retired. */
  fingerprint: string;
  denoBin: string;
  denoDir: string;
  bootstrapPath: string;
  bundleDir: string;
  entryPath: string;
  importMapPath?: string;
  tmpDir: string;
  env: Record<string, string>;
  memoryMb: number;
  /** Largest file the worker may write (RLIMIT_FSIZE, bytes): a larger write fails in the function. */
  fileSizeLimit: number;
  /** The unprivileged user the worker runs as (when the platform is root). */
  user?: { uid: number; gid: number };
  bootTimeoutMs: number;
}

export type LogSink = (level: 'info' | 'error', line: string) => void;

const CLK_TCK = 100;
/** Connections Node keeps to one worker (a new one only when all are busy). */
const MAX_CONNECTIONS = 256;

/**
 * Longest console line kept, in bytes (the logs keep 8192 characters of it): the rest of a longer
 * line is dropped as it arrives, so a function writing without newlines cannot grow the platform.
 */
const MAX_LINE_BYTES = 32 * 1024;
/**
 * Console lines a worker may log per second (the logs keep the last 1000 per project anyway): more
 * are skipped unread and counted, so a function printing in a loop cannot keep the platform busy.
 */
const MAX_LINES_PER_SECOND = 1000;

/** Per worker: whether one more console line may be logged now (at most MAX_LINES_PER_SECOND). */
export class LineBudget {
  private windowStart = 0;
  private used = 0;
  /** Lines skipped in the current second. */
  skipped = 0;

  take(now = Date.now()): boolean {
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.used = 0;
      this.skipped = 0;
    }
    if (this.used < MAX_LINES_PER_SECOND) {
      this.used++;
      return true;
    }
    this.skipped++;
    return false;
  }
}

/**
 * Calls `onLine` for each line of `input` (without its `\n` / `\r\n`), each cut at
 * MAX_LINE_BYTES. `accept(firstByte)` (-1 for an empty line) decides, as a line starts, whether it
 * is read at all.
 */
export function readLines(
  input: Readable,
  onLine: (line: string) => void,
  accept: (firstByte: number) => boolean = () => true,
): void {
  let parts: Buffer[] = [];
  let size = 0;
  let cut = false;
  /** undefined until the current line's first byte (or its end) is seen. */
  let reading: boolean | undefined;
  const emit = () => {
    if (reading !== false) {
      let line = Buffer.concat(parts, size).toString('utf8');
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (cut) line += '…';
      onLine(line);
    }
    parts = [];
    size = 0;
    cut = false;
    reading = undefined;
  };
  input.on('data', (chunk: Buffer) => {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      if (reading === undefined && (end > start || nl !== -1))
        reading = accept(end > start ? (chunk[start] ?? -1) : -1);
      if (reading) {
        const take = Math.min(end - start, MAX_LINE_BYTES - size);
        if (take > 0) {
          parts.push(Buffer.from(chunk.subarray(start, start + take)));
          size += take;
        }
        if (take < end - start) cut = true;
      }
      if (nl === -1) return;
      emit();
      start = nl + 1;
    }
  });
  input.on('end', () => {
    if (reading !== undefined) emit();
  });
}

/** undici, imported when the first worker starts (while Deno boots), not with the server. */
let undici: Promise<{ Pool: typeof Pool }> | undefined;
function loadUndici(): Promise<{ Pool: typeof Pool }> {
  undici ??= import('undici').then((m) => ({ Pool: m.Pool }));
  return undici;
}

const PAGE_SIZE = 4096;

/**
 * Total CPU time (user + system, all threads) in ms and resident memory (all of it: V8's heap,
 * ArrayBuffers, WebAssembly memories, the runtime) in bytes of a live process; undefined when gone.
 * One /proc read.
 */
export function processUsage(pid: number): { cpuMs: number; rssBytes: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK,
      rssBytes: Number(fields[21]) * PAGE_SIZE,
    };
  } catch {
    return undefined;
  }
}

/** Total CPU time of a live process in ms; undefined when gone. */
export function processCpuMs(pid: number): number | undefined {
  return processUsage(pid)?.cpuMs;
}

/** V8's fatal out-of-memory ends a Deno process with SIGTRAP (exit status 133) or an abort. */
function outOfMemory(code: number | null, signal: NodeJS.Signals | null): boolean {
  return signal === 'SIGTRAP' || signal === 'SIGABRT' || code === 133 || code === 134;
}

/**
 * The command that starts a worker: Deno under `sh`, which ignores SIGXFSZ (inherited across
 * exec, so a write past RLIMIT_FSIZE fails with EFBIG inside the function instead of killing the
 * worker) and sets the file-size limit (`ulimit -f`, in 512-byte blocks), then execs Deno (same pid).
 */
export function workerCommand(spec: WorkerSpec): { file: string; args: string[] } {
  const blocks = Math.max(1, Math.floor(spec.fileSizeLimit / 512));
  return {
    file: '/bin/sh',
    args: ['-c', `trap '' XFSZ; ulimit -f ${blocks} && exec "$0" "$@"`, spec.denoBin, ...denoArgs(spec)],
  };
}

export function denoArgs(spec: WorkerSpec): string[] {
  // The process environment holds only the function's variables (plus Deno's own settings), so
  // all of it may be read: an unset name then reads as undefined, as on the hosted platform.
  const args = [
    'run',
    '--quiet',
    '--no-prompt',
    '--no-config',
    '--no-lock',
    '--cached-only',
    '--allow-net',
    // Deno's net permission covers listening as well as connecting: a function may not open a port
    // on every interface of the host (no outbound connection ever targets these addresses), nor
    // ask the cloud's instance metadata service for the host's credentials.
    '--deny-net=0.0.0.0,[::],169.254.169.254,[fd00:ec2::254],metadata.google.internal',
    '--allow-env',
    // Read and write: its bundle and its temp folder only (its socket is there). Deno lets a worker
    // connect to a Unix socket only where it may read and write, so no other worker's socket.
    `--allow-read=${spec.bundleDir},${spec.tmpDir}`,
    `--allow-write=${spec.tmpDir}`,
    `--v8-flags=--max-old-space-size=${spec.memoryMb}`,
  ];
  // File URLs, not paths: a `#`, `?` or `%` in a folder or file name is then part of the name.
  if (spec.importMapPath) args.push(`--import-map=${pathToFileURL(spec.importMapPath).href}`);
  args.push(spec.bootstrapPath, pathToFileURL(spec.entryPath).href, socketPathOf(spec));
  return args;
}

export function socketPathOf(spec: WorkerSpec): string {
  return join(spec.tmpDir, SOCKET_NAME);
}

export class FunctionWorker {
  readonly child: ChildProcess;
  /** True once the worker printed its ready marker. */
  private listening = false;
  /** Kept-alive connections to the worker's port (undici: the cheapest HTTP client hop in Node). */
  pool?: Pool;
  /** True once the worker listens (so a lease need not wait on `ready`). */
  isReady = false;
  inflight = 0;
  lastUsed = Date.now();
  /** Its CPU time when first seen idle since its last invocation (background work is budgeted too). */
  idleCpuMark?: number;
  /** Set once the worker must take no new invocations (newer code/env); killed when idle. */
  retired = false;
  /** Why it ended; undefined while alive. */
  ended?: WorkerEnd;
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  private readonly endListeners = new Set<(why: WorkerEnd) => void>();
  /** The last /proc reading of its CPU time (see recentCpuMs). */
  private sampled?: { ms: number; at: number };

  constructor(
    readonly spec: WorkerSpec,
    onLog: LogSink,
  ) {
    void loadUndici().catch(() => {});
    const command = workerCommand(spec);
    this.child = spawn(command.file, command.args, {
      cwd: spec.tmpDir,
      uid: spec.user?.uid,
      gid: spec.user?.gid,
      // Only the function's own variables (identifier names, none that steers the loader, the
      // runtime or the process: environment-names.ts) and the runtime's settings, which the
      // bootstrap removes before the function runs. Never the platform's own environment.
      env: {
        ...workerEnvironment(spec.env),
        DENO_DIR: spec.denoDir,
        DENO_NO_UPDATE_CHECK: '1',
        DENO_NO_PROMPT: '1',
        // The operating system's certificate store (self-hosted networks often add their own CA).
        DENO_TLS_CA_STORE: 'system',
        NO_COLOR: '1',
        TMPDIR: spec.tmpDir,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdin?.on('error', () => {});
    this.exited = new Promise((resolve) => {
      this.child.once('error', () => {
        this.finish('crash');
        void this.pool?.destroy().catch(() => {});
        resolve();
      });
      this.child.once('exit', (code, signal) => {
        // Our own kills set `ended` first; anything else is a crash (V8 out of memory aborts).
        this.finish(this.ended ?? (outOfMemory(code, signal) ? 'memory' : 'crash'));
        void this.pool?.destroy().catch(() => {});
        resolve();
      });
    });
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error('worker did not start in time'));
        void this.kill('boot');
      }, spec.bootTimeoutMs);
      void this.exited.then(() => {
        clearTimeout(timer);
        reject(new Error('worker exited before it was ready'));
      });
      const { stdout, stderr } = this.child as ChildProcessByStdio<Writable, Readable, Readable>;
      // The ready marker (it starts with NUL) is always read; other lines within the budget.
      const budget = new LineBudget();
      const accept = (first: number) => {
        if (first === 0 && !this.listening) return true;
        const ok = budget.take();
        if (!ok && budget.skipped === 1)
          onLog(
            'error',
            `(console output over ${MAX_LINES_PER_SECOND} lines per second: the rest of this second's lines are skipped)`,
          );
        return ok;
      };
      readLines(
        stdout,
        (line) => {
          if (!this.listening && this.alive && line === READY_MARKER) {
            this.listening = true;
            loadUndici().then(({ Pool }) => {
              // Exited meanwhile: `exited` has rejected `ready` already.
              if (!this.alive) return;
              // No client-side timeouts: the runtime's wall-clock limit ends requests (worker killed).
              this.pool = new Pool('http://localhost', {
                socketPath: socketPathOf(spec),
                connections: MAX_CONNECTIONS,
                pipelining: 1,
                headersTimeout: 0,
                bodyTimeout: 0,
              });
              this.isReady = true;
              clearTimeout(timer);
              resolve();
            }, reject);
          } else onLog('info', line);
        },
        accept,
      );
      readLines(stderr, (line) => onLog('error', line), accept);
    });
    this.ready.catch(() => {});
  }

  get alive(): boolean {
    return this.ended === undefined;
  }

  /** CPU time now (reads /proc). */
  cpuMs(): number | undefined {
    return this.usage()?.cpuMs;
  }

  /** CPU time and resident memory now (one /proc read). */
  usage(): { cpuMs: number; rssBytes: number } | undefined {
    const u = this.child.pid === undefined ? undefined : processUsage(this.child.pid);
    if (u !== undefined) this.sampled = { ms: u.cpuMs, at: performance.now() };
    return u;
  }

  /**
   * CPU time as of at most `maxAgeMs` ago: the runtime's last sample when that recent (a busy
   * worker is sampled every tick, so a burst of invocations does not read /proc once each), else now.
   */
  recentCpuMs(maxAgeMs: number): number | undefined {
    const s = this.sampled;
    return s && performance.now() - s.at <= maxAgeMs ? s.ms : this.cpuMs();
  }

  onEnd(fn: (why: WorkerEnd) => void): () => void {
    if (this.ended) {
      fn(this.ended);
      return () => {};
    }
    this.endListeners.add(fn);
    return () => this.endListeners.delete(fn);
  }

  private finish(why: WorkerEnd): void {
    if (this.ended && this.endListeners.size === 0) return;
    this.ended ??= why;
    const listeners = [...this.endListeners];
    this.endListeners.clear();
    for (const fn of listeners) fn(this.ended);
  }

  /** SIGKILL (a runaway worker gets no grace); resolves once the process is gone. */
  kill(why: WorkerEnd): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.ended ??= why;
      this.child.kill('SIGKILL');
    }
    this.finish(this.ended ?? why);
    return this.exited;
  }
}
