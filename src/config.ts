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
  /**
   * The platform's PostgreSQL router ("pooler"): clients log in as `<role>.<ref>` and reach that
   * project's database. Port 5432 by default because the Supabase CLI always uses 5432 with the
   * pooler host it is given; undefined turns it off.
   */
  poolerHost: string;
  poolerPort?: number;
  /** Statement timeout of `POST /v1/projects/{ref}/database/query`, in ms. */
  dbQueryTimeoutMs: number;
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
    poolerHost: env.STRATA_POOLER_HOST || (env.STRATA_HOST ?? '127.0.0.1'),
    poolerPort: env.STRATA_POOLER_PORT === 'off' ? undefined : num(env.STRATA_POOLER_PORT, 5432),
    dbQueryTimeoutMs: num(env.STRATA_DB_QUERY_TIMEOUT_MS, 60_000),
  };
}
