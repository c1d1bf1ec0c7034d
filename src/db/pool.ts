import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
export type Client = pg.Client;

export interface PoolOptions {
  max?: number;
  applicationName?: string;
  /** Give up connecting a new client after this long (default 5 s): a vanished server must not hang requests. */
  connectTimeoutMs?: number;
}

export function createPool(connectionString: string, opts: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: opts.max ?? 10,
    idleTimeoutMillis: 30_000,
    application_name: opts.applicationName ?? 'strata',
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 5_000,
    // Notice a peer that vanished without closing the connection.
    keepAlive: true,
  });
  // An idle client that dies (server restart) must not crash the process; the pool drops it, and a
  // client released after a connection error is dropped too (pg-pool checks it is still queryable).
  pool.on('error', () => {});
  return pool;
}

/** Opens one client, runs `work`, closes it. `options`: the startup packet's `-c` settings. */
export async function withClient<T>(
  connectionString: string,
  work: (c: pg.Client) => Promise<T>,
  options?: string,
): Promise<T> {
  const client = new pg.Client({ connectionString, application_name: 'strata', options });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Same server and credentials, another database. */
export function withDatabase(connectionString: string, database: string): string {
  const u = new URL(connectionString);
  u.pathname = '/' + encodeURIComponent(database);
  return u.toString();
}

/** Same server and database, other credentials. */
export function withUser(connectionString: string, user: string, password: string | undefined): string {
  const u = new URL(connectionString);
  u.username = encodeURIComponent(user);
  u.password = password ? encodeURIComponent(password) : '';
  return u.toString();
}
