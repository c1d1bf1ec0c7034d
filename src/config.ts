/** Platform configuration: defaults, then environment variables, then command-line flags. */
import { resolve } from 'node:path';

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
  /** Preferred port of the embedded PostgreSQL. */
  dbPort: number;
  /** An existing PostgreSQL (superuser URL) instead of the embedded one. */
  databaseUrl?: string;
  /** Extra PostgreSQL servers projects may be placed on (id=url,...). */
  extraDbServers: DbServerConfig[];
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
  s3?: {
    endpoint?: string;
    region: string;
    bucket: string;
    accessKeyId?: string;
    secretAccessKey?: string;
    forcePathStyle: boolean;
  };
  logRequests: boolean;
  /** Edge Functions runtime limits (see README "Edge Functions"). */
  functions: FunctionsConfig;
}

export interface FunctionsConfig {
  /** Wall-clock limit of one invocation (STRATA_FUNCTIONS_TIMEOUT_MS, default 150 s). */
  requestTimeoutMs: number;
  /** CPU time one invocation may use before its worker is killed (STRATA_FUNCTIONS_CPU_MS, default 2 s). */
  cpuBudgetMs: number;
  /** V8 old-space cap of a worker in MB (STRATA_FUNCTIONS_MEMORY_MB, default 150). */
  memoryMb: number;
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
}

function num(v: string | undefined, d: number): number {
  const n = v === undefined || v === '' ? NaN : Number(v);
  return Number.isFinite(n) ? n : d;
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
      return { id: s.slice(0, i), url: s.slice(i + 1) };
    });
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): StrataConfig {
  return {
    dataDir: resolve(env.STRATA_DATA_DIR ?? '.strata'),
    host: env.STRATA_HOST ?? '127.0.0.1',
    port: num(env.STRATA_PORT ?? env.PORT, 54321),
    dbPort: num(env.STRATA_DB_PORT, 54322),
    databaseUrl: env.DATABASE_URL || undefined,
    extraDbServers: parseDbServers(env.STRATA_DB_SERVERS),
    bodyLimit: num(env.STRATA_BODY_LIMIT, 1024 * 1024),
    storageFileSizeLimit: num(env.STRATA_STORAGE_FILE_SIZE_LIMIT, 50 * 1024 * 1024 * 1024),
    rateLimitMax: num(env.STRATA_RATE_LIMIT_MAX, 120),
    rateLimitWindowMs: num(env.STRATA_RATE_LIMIT_WINDOW_MS, 60_000),
    banThreshold: num(env.STRATA_BAN_THRESHOLD, 20),
    banWindowMs: num(env.STRATA_BAN_WINDOW_MS, 60_000),
    dnsResolver: env.STRATA_DNS_RESOLVER || undefined,
    storageBackend: env.STRATA_STORAGE_BACKEND === 's3' ? 's3' : 'file',
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
    functions: {
      requestTimeoutMs: num(env.STRATA_FUNCTIONS_TIMEOUT_MS, 150_000),
      cpuBudgetMs: num(env.STRATA_FUNCTIONS_CPU_MS, 2_000),
      memoryMb: num(env.STRATA_FUNCTIONS_MEMORY_MB, 150),
      idleTimeoutMs: num(env.STRATA_FUNCTIONS_IDLE_MS, 60_000),
      poolSize: Math.max(1, num(env.STRATA_FUNCTIONS_POOL_SIZE, 2)),
      maxWorkers: Math.max(1, num(env.STRATA_FUNCTIONS_MAX_WORKERS, 16)),
      workerConcurrency: Math.max(1, num(env.STRATA_FUNCTIONS_WORKER_CONCURRENCY, 16)),
      bodyLimit: num(env.STRATA_FUNCTIONS_BODY_LIMIT, 20 * 1024 * 1024),
      logLimit: Math.max(1, num(env.STRATA_FUNCTIONS_LOG_LIMIT, 1000)),
      denoBin: env.STRATA_DENO_BIN || undefined,
    },
  };
}
