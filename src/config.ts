/** Platform configuration: defaults, then environment variables, then command-line flags. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Deepest GraphQL selection nesting accepted by default (graphql/http/options.ts applies it). */
export const DEFAULT_MAX_DEPTH = 20;
/** Most GraphQL field selections one operation may make by default, fragments expanded. */
export const DEFAULT_MAX_SELECTIONS = 5_000;

/** The pooler's port unless STRATA_POOLER_PORT says otherwise: the hosted CLI's local stack uses 54329 too. */
export const DEFAULT_POOLER_PORT = 54329;

export interface DbServerConfig {
  /** Name recorded on each project placed on this server. */
  id: string;
  /** Superuser connection URL. */
  url: string;
}

export interface StrataConfig {
  /** Folder for the embedded database, object bytes and local state. */
  dataDir: string;
  host: string;
  port: number;
  /**
   * The web console's own port (its own origin, apart from the API origin that serves user
   * content: docs/security/origins.md); 0 = any free port, undefined = no console.
   */
  consolePort?: number;
  /** Preferred port of the embedded PostgreSQL. */
  dbPort: number;
  /** An existing PostgreSQL (superuser URL) instead of the embedded one. */
  databaseUrl?: string;
  /** Extra PostgreSQL servers projects may be placed on (id=url,...). */
  extraDbServers: DbServerConfig[];
  /**
   * Secrets every node of a cluster must share (docs/cluster.md); unset: generated
   * once and kept in <dataDir>/state.json. platformKey: STRATA_PLATFORM_KEY (64 hex digits) or
   * the file named by STRATA_PLATFORM_KEY_FILE; authenticatorPassword: STRATA_AUTHENTICATOR_PASSWORD;
   * accessToken (the default user's, `sbp_...`): STRATA_ACCESS_TOKEN.
   */
  shared: { platformKey?: string; authenticatorPassword?: string; accessToken?: string };
  /** Graceful shutdown: how long in-flight requests may take to finish after SIGTERM (STRATA_SHUTDOWN_GRACE_MS, default 30 s). */
  shutdownGraceMs: number;
  /** Folder of pg_dump / pg_restore for `strata projects move` (STRATA_PG_BIN_DIR); default: PATH. */
  pgBinDir?: string;
  /** Name of the platform's metadata database on the primary server (STRATA_PLATFORM_DATABASE, default strata_platform). */
  platformDatabase?: string;
  /** Largest accepted request body for JSON APIs, in bytes. */
  bodyLimit: number;
  /** Global storage upload limit in bytes. */
  storageFileSizeLimit: number;
  /** Management API rate limit: requests per window per token and endpoint. */
  rateLimitMax: number;
  rateLimitWindowMs: number;
  /** Network bans: failed authentications from one IP within the window before it is banned. */
  banThreshold: number;
  banWindowMs: number;
  /** DNS resolver for custom hostname verification ("host:port"); system resolver when unset. */
  dnsResolver?: string;
  /** Storage backend for object bytes. */
  storageBackend: 'file' | 's3';
  /** fsync uploaded bytes before publishing them (STRATA_STORAGE_FSYNC=0 skips it, for disposable data). */
  storageFsync: boolean;
  /**
   * ETag of objects on the file backend: `md5` (the default, S3's and the reference's: the MD5 of
   * the bytes, hashed while they stream in) or `mtime` (the reference's alternative: modification
   * time and size in hex, no hashing; STRATA_STORAGE_ETAG_ALGORITHM=mtime).
   */
  storageEtagAlgorithm: 'md5' | 'mtime';
  /**
   * Storage reconciliation (on start, then every `storageSweepIntervalMs`; 0 = only on start):
   * temporary files, abandoned resumable uploads and object bytes no committed row references are
   * removed once older than `storageSweepGraceMs` (STRATA_STORAGE_SWEEP_GRACE_MS, default 15 min;
   * STRATA_STORAGE_SWEEP_INTERVAL_MS, default 10 min).
   */
  storageSweepGraceMs: number;
  storageSweepIntervalMs: number;
  /** How long an unfinished resumable (TUS) upload may stay idle before it expires (STRATA_STORAGE_TUS_EXPIRY_MS, default 24 h). */
  storageTusExpiryMs: number;
  /**
   * How long a resumable-upload request waits for its upload's lock while another request holds it
   * and does not let go before it is answered 503 LockTimeout (STRATA_STORAGE_TUS_LOCK_TIMEOUT_MS, default 30 s).
   */
  storageTusLockTimeoutMs: number;
  s3?: {
    endpoint?: string;
    region: string;
    bucket: string;
    accessKeyId?: string;
    secretAccessKey?: string;
    forcePathStyle: boolean;
  };
  logRequests: boolean;
  /** A database health check (health endpoints, `strata status`) gives up after this long. */
  dbHealthTimeoutMs: number;
  /** Connecting a pooled client gives up after this long (a vanished server must not hang requests). */
  dbConnectTimeoutMs: number;
  /**
   * The platform's PostgreSQL router ("pooler"): clients log in as `<role>.<ref>` and reach that
   * project's database. Port 54329 by default, as the hosted CLI's local stack puts its pooler:
   * most developers' machines already run a PostgreSQL on 5432. undefined turns it off.
   */
  poolerHost: string;
  poolerPort?: number;
  /** Statement timeout of `POST /v1/projects/{ref}/database/query`, in ms. */
  dbQueryTimeoutMs: number;
  /** GraphQL: deepest accepted selection nesting (STRATA_GRAPHQL_MAX_DEPTH, 0 = none); false for none. */
  graphqlMaxDepth: number | false;
  /**
   * GraphQL: most field selections one operation may make, counted with fragments expanded
   * (STRATA_GRAPHQL_MAX_SELECTIONS, 0 = none); false for none.
   */
  graphqlMaxSelections: number | false;
  /** Image transformations (/render/image/...): limits and the rendered-variant cache. */
  image: ImageConfig;
  /** The S3 protocol ({project}/storage/v1/s3). */
  s3Protocol: S3ProtocolConfig;
  /**
   * CDN cache purge (`DELETE {project}/storage/v1/cdn/...`, as upstream's CDN_PURGE_ENDPOINT_URL/KEY):
   * requests are forwarded as `POST <url>/purge` with a bearer key. Unset: the routes answer 400.
   */
  storageCdnPurge?: { url: string; key?: string };
  /** Edge Functions runtime limits (see docs/functions.md). */
  functions: FunctionsConfig;
  /** GraphQL subscriptions (live queries) over WebSocket on {project}/graphql/v1 (docs/realtime.md). */
  realtime: RealtimeConfig;
}

export interface RealtimeConfig {
  /** STRATA_REALTIME_INTERVAL_MS: how often live queries run again (default 1000). */
  intervalMs: number;
  /**
   * STRATA_REALTIME_GAP_MS: with the change feed, the least time between the starts of two
   * refreshes (default 50): commits within it share one refresh (latency vs. statements per change).
   */
  gapMs: number;
  /** STRATA_REALTIME_MAX_PER_CONNECTION: subscriptions one connection may hold (default 100). */
  maxPerConnection: number;
  /** STRATA_REALTIME_MAX_PER_PROJECT: subscriptions one project may hold on this node (default 10,000). */
  maxPerProject: number;
  /** STRATA_REALTIME_CONCURRENCY: live-query statements one project runs at once (default 4). */
  concurrency: number;
  /**
   * STRATA_REALTIME_REPLICATION (default on; `off` turns it off): live queries re-run when logical
   * replication reports a commit in their database, instead of every interval; where the server
   * does not allow it (wal_level, privilege, slots), they poll.
   */
  replication: boolean;
  /** STRATA_REALTIME_CHANGES_RETAINED: row changes a database's change streams retain for resuming (default 10,000). */
  changesRetained: number;
  /** STRATA_REALTIME_CHANGES_RETAINED_MS: and for how long at most (default 300,000 = 5 min). */
  changesRetainedMs: number;
  /** STRATA_REALTIME_CHANGES_QUEUE: change events one subscription may have waiting to be sent (default 1,000). */
  changesQueue: number;
}

export interface ImageConfig {
  /** STRATA_IMAGE_TRANSFORMATION_ENABLED (default on): off → render routes answer FeatureNotEnabled. */
  enabled: boolean;
  /** STRATA_IMAGE_MAX_SOURCE_BYTES: largest source object rendered (default 25 MiB). */
  maxSourceBytes: number;
  /** STRATA_IMAGE_MAX_SOURCE_PIXELS: largest source width × height (default 50 megapixels). */
  maxSourcePixels: number;
  /** STRATA_IMAGE_MAX_DIMENSION: requested width/height are clamped to 1..this (default 2500). */
  maxDimension: number;
  /** STRATA_IMAGE_CONCURRENCY: renders running at once; more wait in line (default 2). */
  concurrency: number;
  /** STRATA_IMAGE_QUEUE_LIMIT: renders allowed to wait; beyond it → 429 SlowDown (default 64). */
  queueLimit: number;
  /** STRATA_IMAGE_CACHE_BYTES: memory for rendered variants, 0 disables the cache (default 64 MiB). */
  cacheBytes: number;
}

export interface S3ProtocolConfig {
  /** STRATA_S3_PROTOCOL_REGION: the region clients sign for (default "local"; see enforceRegion). */
  region: string;
  /** STRATA_S3_PROTOCOL_ENFORCE_REGION=1: refuse signatures scoped to another region. */
  enforceRegion: boolean;
  /** STRATA_S3_PROTOCOL_MAX_KEYS: ListObjectsV2 / ListParts page cap (default 1000). */
  maxKeys: number;
}

/** A limit from the environment: unset → `d`, 0 → none (false), else a whole number. */
function limit(name: string, v: string | undefined, d: number): number | false {
  if (v === undefined || v.trim() === '') return d;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number (got "${v}")`);
  return n === 0 ? false : n;
}

export interface FunctionsConfig {
  /** Wall-clock limit of one invocation (STRATA_FUNCTIONS_TIMEOUT_MS, default 150 s). */
  requestTimeoutMs: number;
  /** CPU time one invocation may use before its worker is killed (STRATA_FUNCTIONS_CPU_MS, default 2 s). */
  cpuBudgetMs: number;
  /**
   * Memory of a worker in MB (STRATA_FUNCTIONS_MEMORY_MB, default 150): V8's old-space cap, and
   * all of its resident memory (ArrayBuffers, WebAssembly memories too) beyond the runtime's own
   * is counted: over it, the worker is killed (546 WORKER_LIMIT).
   */
  memoryMb: number;
  /** Temp folder space of a worker in MB (STRATA_FUNCTIONS_TMP_MB, default 256): one file larger fails to write; more in total ends the worker. */
  tmpMb: number;
  /** An idle worker is stopped after this long (STRATA_FUNCTIONS_IDLE_MS, default 60 s). */
  idleTimeoutMs: number;
  /** Workers per function (STRATA_FUNCTIONS_POOL_SIZE, default 2). */
  poolSize: number;
  /** Workers across all functions (STRATA_FUNCTIONS_MAX_WORKERS, default 16). */
  maxWorkers: number;
  /** Concurrent invocations one worker takes before another is started (STRATA_FUNCTIONS_WORKER_CONCURRENCY, default 16). */
  workerConcurrency: number;
  /** Largest invocation request body in bytes (STRATA_FUNCTIONS_BODY_LIMIT, default 20 MB). */
  bodyLimit: number;
  /** Log entries kept per project (STRATA_FUNCTIONS_LOG_LIMIT, default 1000). */
  logLimit: number;
  /** The Deno binary (STRATA_DENO_BIN); default: the one from the `deno` npm package. */
  denoBin?: string;
  /**
   * Start a worker as soon as a function is deployed/updated, and restart the recycled workers of
   * a secrets change, so the first request does not pay the cold start (STRATA_FUNCTIONS_PREWARM,
   * default 1; 0 disables). Never evicts: only when fewer than maxWorkers are running.
   */
  prewarm?: boolean;
  /**
   * A Deno npm cache made at install time holding the CLI function template's imports
   * (scripts/seed-deno-cache.mjs: `dist/deno-seed`; STRATA_FUNCTIONS_DENO_SEED names another
   * folder, `off` none). What it has and the data folder's Deno cache lacks is copied there before
   * a deploy's import check, so the template deploys without the network.
   */
  denoSeedDir?: string;
  /**
   * The proxy the deploy's module download goes through (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, or
   * their lower-case forms, of the platform's environment), given to Deno's import check only.
   */
  moduleProxy: { httpsProxy?: string; httpProxy?: string; noProxy?: string };
}

function etagAlgorithm(v: string | undefined): 'md5' | 'mtime' {
  if (v === undefined || v === '' || v === 'md5') return 'md5';
  if (v === 'mtime') return 'mtime';
  throw new Error(`STRATA_STORAGE_ETAG_ALGORITHM must be "md5" or "mtime" (got "${v}")`);
}

/** STRATA_FUNCTIONS_DENO_SEED: a folder, `off` for none; unset: `dist/deno-seed` of this package. */
function denoSeedDir(v: string | undefined): string | undefined {
  if (v === 'off') return undefined;
  if (v) return resolve(v);
  // src/config.ts and dist/config.js are both one level below the package's root.
  return fileURLToPath(new URL('../dist/deno-seed', import.meta.url));
}

/** A numeric setting: its default when unset or empty; anything that is not a number is refused, naming the variable. */
function num(env: NodeJS.ProcessEnv, name: string, d: number): number {
  const v = env[name];
  if (v === undefined || v.trim() === '') return d;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number (got "${v}")`);
  return n;
}

/** A TCP port given as text (a flag or a variable): a whole number from 0 (any free port) to 65535. */
export function portNumber(v: string, what: string): number {
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || n > 65_535)
    throw new Error(`${what} must be a port number, 0 to 65535 (got "${v}")`);
  return n;
}

function port(env: NodeJS.ProcessEnv, name: string, d: number): number {
  const v = env[name];
  return v === undefined || v.trim() === '' ? d : portNumber(v, name);
}

/**
 * A PostgreSQL address as the pg driver takes it (postgresql://user:password@host:port/database, or
 * socket:/path?db=name); anything else would be read as a relative URL (and end in a DNS error for
 * the host "base"). The value is not repeated in the error: it may hold a password.
 */
export function checkedDatabaseUrl(url: string, what: string): string {
  if (!/^(postgres|postgresql|socket):/i.test(url.trim()))
    throw new Error(`${what} must be a postgresql:// URL (postgresql://user:password@host:5432/database)`);
  return url.trim();
}

export function parseDbServers(v: string | undefined): DbServerConfig[] {
  if (!v) return [];
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const i = s.indexOf('=');
      if (i <= 0) throw new Error(`STRATA_DB_SERVERS entry "${s}" must be id=postgresql://...`);
      return {
        id: s.slice(0, i),
        url: checkedDatabaseUrl(s.slice(i + 1), `STRATA_DB_SERVERS entry "${s.slice(0, i)}"`),
      };
    });
}

/** STRATA_PLATFORM_KEY, else the contents of STRATA_PLATFORM_KEY_FILE; checked to be 32 bytes of hex. */
function platformKeyFrom(env: NodeJS.ProcessEnv): string | undefined {
  const file = env.STRATA_PLATFORM_KEY_FILE;
  const key = (env.STRATA_PLATFORM_KEY || (file ? readFileSync(file, 'utf8') : '')).trim();
  if (!key) return undefined;
  if (!/^[0-9a-fA-F]{64}$/.test(key))
    throw new Error(
      'STRATA_PLATFORM_KEY(_FILE) must be 64 hex digits (32 bytes), e.g. `openssl rand -hex 32`',
    );
  return key.toLowerCase();
}

/** What `strata serve` / `strata sdl` take from the environment when no flag gives it (raw text: the commands check it). */
export interface StandaloneEnv {
  databaseUrl?: string;
  jwtSecret?: string;
  port?: string;
  host?: string;
  authenticatorPassword?: string;
}

export function standaloneEnv(env: NodeJS.ProcessEnv = process.env): StandaloneEnv {
  return {
    databaseUrl: env.DATABASE_URL,
    jwtSecret: env.STRATA_JWT_SECRET,
    port: env.STRATA_PORT,
    host: env.STRATA_HOST,
    authenticatorPassword: env.STRATA_AUTHENTICATOR_PASSWORD,
  };
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): StrataConfig {
  return {
    dataDir: resolve(env.STRATA_DATA_DIR ?? '.strata'),
    host: env.STRATA_HOST ?? '127.0.0.1',
    port: port(env, env.STRATA_PORT !== undefined ? 'STRATA_PORT' : 'PORT', 54321),
    dbPort: port(env, 'STRATA_DB_PORT', 54322),
    // 54323: the Supabase CLI's local Studio port, beside API 54321 and DB 54322.
    consolePort: env.STRATA_CONSOLE_PORT === 'off' ? undefined : port(env, 'STRATA_CONSOLE_PORT', 54323),
    databaseUrl: env.DATABASE_URL || undefined,
    extraDbServers: parseDbServers(env.STRATA_DB_SERVERS),
    shared: {
      platformKey: platformKeyFrom(env),
      authenticatorPassword: env.STRATA_AUTHENTICATOR_PASSWORD || undefined,
      accessToken: env.STRATA_ACCESS_TOKEN || undefined,
    },
    shutdownGraceMs: num(env, 'STRATA_SHUTDOWN_GRACE_MS', 30_000),
    platformDatabase: env.STRATA_PLATFORM_DATABASE || undefined,
    pgBinDir: env.STRATA_PG_BIN_DIR || undefined,
    bodyLimit: num(env, 'STRATA_BODY_LIMIT', 1024 * 1024),
    storageFileSizeLimit: num(env, 'STRATA_STORAGE_FILE_SIZE_LIMIT', 50 * 1024 * 1024 * 1024),
    rateLimitMax: num(env, 'STRATA_RATE_LIMIT_MAX', 120),
    rateLimitWindowMs: num(env, 'STRATA_RATE_LIMIT_WINDOW_MS', 60_000),
    banThreshold: num(env, 'STRATA_BAN_THRESHOLD', 20),
    banWindowMs: num(env, 'STRATA_BAN_WINDOW_MS', 60_000),
    dnsResolver: env.STRATA_DNS_RESOLVER || undefined,
    storageBackend: env.STRATA_STORAGE_BACKEND === 's3' ? 's3' : 'file',
    storageFsync: env.STRATA_STORAGE_FSYNC !== '0',
    storageEtagAlgorithm: etagAlgorithm(env.STRATA_STORAGE_ETAG_ALGORITHM),
    storageSweepGraceMs: num(env, 'STRATA_STORAGE_SWEEP_GRACE_MS', 15 * 60_000),
    storageSweepIntervalMs: num(env, 'STRATA_STORAGE_SWEEP_INTERVAL_MS', 10 * 60_000),
    storageTusExpiryMs: num(env, 'STRATA_STORAGE_TUS_EXPIRY_MS', 24 * 60 * 60_000),
    storageTusLockTimeoutMs: num(env, 'STRATA_STORAGE_TUS_LOCK_TIMEOUT_MS', 30_000),
    s3: env.STRATA_S3_BUCKET
      ? {
          endpoint: env.STRATA_S3_ENDPOINT || undefined,
          region: env.STRATA_S3_REGION ?? 'us-east-1',
          bucket: env.STRATA_S3_BUCKET,
          accessKeyId: env.STRATA_S3_ACCESS_KEY_ID,
          secretAccessKey: env.STRATA_S3_SECRET_ACCESS_KEY,
          forcePathStyle: env.STRATA_S3_FORCE_PATH_STYLE !== 'false',
        }
      : undefined,
    logRequests: env.STRATA_LOG_REQUESTS === '1',
    dbHealthTimeoutMs: num(env, 'STRATA_DB_HEALTH_TIMEOUT_MS', 2_000),
    dbConnectTimeoutMs: num(env, 'STRATA_DB_CONNECT_TIMEOUT_MS', 5_000),
    poolerHost: env.STRATA_POOLER_HOST || (env.STRATA_HOST ?? '127.0.0.1'),
    poolerPort:
      env.STRATA_POOLER_PORT === 'off' ? undefined : port(env, 'STRATA_POOLER_PORT', DEFAULT_POOLER_PORT),
    dbQueryTimeoutMs: num(env, 'STRATA_DB_QUERY_TIMEOUT_MS', 60_000),
    graphqlMaxDepth: limit('STRATA_GRAPHQL_MAX_DEPTH', env.STRATA_GRAPHQL_MAX_DEPTH, DEFAULT_MAX_DEPTH),
    graphqlMaxSelections: limit(
      'STRATA_GRAPHQL_MAX_SELECTIONS',
      env.STRATA_GRAPHQL_MAX_SELECTIONS,
      DEFAULT_MAX_SELECTIONS,
    ),
    image: {
      enabled: env.STRATA_IMAGE_TRANSFORMATION_ENABLED !== 'false',
      maxSourceBytes: num(env, 'STRATA_IMAGE_MAX_SOURCE_BYTES', 25 * 1024 * 1024),
      maxSourcePixels: num(env, 'STRATA_IMAGE_MAX_SOURCE_PIXELS', 50_000_000),
      maxDimension: num(env, 'STRATA_IMAGE_MAX_DIMENSION', 2500),
      concurrency: Math.max(1, num(env, 'STRATA_IMAGE_CONCURRENCY', 2)),
      queueLimit: Math.max(0, num(env, 'STRATA_IMAGE_QUEUE_LIMIT', 64)),
      cacheBytes: Math.max(0, num(env, 'STRATA_IMAGE_CACHE_BYTES', 64 * 1024 * 1024)),
    },
    storageCdnPurge: env.STRATA_STORAGE_CDN_PURGE_URL
      ? { url: env.STRATA_STORAGE_CDN_PURGE_URL, key: env.STRATA_STORAGE_CDN_PURGE_KEY || undefined }
      : undefined,
    s3Protocol: {
      region: env.STRATA_S3_PROTOCOL_REGION || 'local',
      enforceRegion: env.STRATA_S3_PROTOCOL_ENFORCE_REGION === '1',
      maxKeys: Math.max(1, num(env, 'STRATA_S3_PROTOCOL_MAX_KEYS', 1000)),
    },
    realtime: {
      intervalMs: Math.max(10, num(env, 'STRATA_REALTIME_INTERVAL_MS', 1000)),
      gapMs: Math.max(0, num(env, 'STRATA_REALTIME_GAP_MS', 50)),
      maxPerConnection: Math.max(1, num(env, 'STRATA_REALTIME_MAX_PER_CONNECTION', 100)),
      maxPerProject: Math.max(1, num(env, 'STRATA_REALTIME_MAX_PER_PROJECT', 10_000)),
      concurrency: Math.max(1, num(env, 'STRATA_REALTIME_CONCURRENCY', 4)),
      replication: env.STRATA_REALTIME_REPLICATION !== 'off',
      changesRetained: Math.max(1, num(env, 'STRATA_REALTIME_CHANGES_RETAINED', 10_000)),
      changesRetainedMs: Math.max(1000, num(env, 'STRATA_REALTIME_CHANGES_RETAINED_MS', 300_000)),
      changesQueue: Math.max(1, num(env, 'STRATA_REALTIME_CHANGES_QUEUE', 1000)),
    },
    functions: {
      requestTimeoutMs: num(env, 'STRATA_FUNCTIONS_TIMEOUT_MS', 150_000),
      cpuBudgetMs: num(env, 'STRATA_FUNCTIONS_CPU_MS', 2_000),
      memoryMb: num(env, 'STRATA_FUNCTIONS_MEMORY_MB', 150),
      tmpMb: Math.max(1, num(env, 'STRATA_FUNCTIONS_TMP_MB', 256)),
      idleTimeoutMs: num(env, 'STRATA_FUNCTIONS_IDLE_MS', 60_000),
      poolSize: Math.max(1, num(env, 'STRATA_FUNCTIONS_POOL_SIZE', 2)),
      maxWorkers: Math.max(1, num(env, 'STRATA_FUNCTIONS_MAX_WORKERS', 16)),
      workerConcurrency: Math.max(1, num(env, 'STRATA_FUNCTIONS_WORKER_CONCURRENCY', 16)),
      bodyLimit: num(env, 'STRATA_FUNCTIONS_BODY_LIMIT', 20 * 1024 * 1024),
      logLimit: Math.max(1, num(env, 'STRATA_FUNCTIONS_LOG_LIMIT', 1000)),
      denoBin: env.STRATA_DENO_BIN || undefined,
      prewarm: env.STRATA_FUNCTIONS_PREWARM !== '0',
      denoSeedDir: denoSeedDir(env.STRATA_FUNCTIONS_DENO_SEED),
      moduleProxy: {
        httpsProxy: env.HTTPS_PROXY || env.https_proxy || undefined,
        httpProxy: env.HTTP_PROXY || env.http_proxy || undefined,
        noProxy: env.NO_PROXY || env.no_proxy || undefined,
      },
    },
  };
}
