/**
 * The one way to borrow a client from a pool: `withPooledClient(pool, work)`. Nothing runs between
 * the acquire and the `try` whose `finally` gives the client back, so no error of `work` (nor of
 * anything it calls) can keep a client checked out. The client goes back idle, or is destroyed:
 * - `work` left a transaction open (returned or threw inside one): it is rolled back first;
 * - that rollback failed, the connection reported an error, or `discardClient` was called (the
 *   connection's state is unknown, e.g. a protocol-level failure or per-connection state that
 *   could not be reset): it is destroyed.
 * `pool.query()` is pg-pool's own acquire/release and needs no wrapper.
 */
import type pg from 'pg';

const SETTLE_TIMEOUT_MS = 10_000;

/** Clients whose connection must not be reused, with the reason. */
const discarded = new WeakMap<pg.PoolClient, Error>();

/** Marks `client` (borrowed with withPooledClient) to be destroyed rather than returned to the pool. */
export function discardClient(client: pg.PoolClient, reason: unknown): void {
  discarded.set(client, reason instanceof Error ? reason : new Error(String(reason)));
}

/** Brings the client back to idle; returns the error to release it with when that is not possible. */
async function settle(client: pg.PoolClient, failed: boolean): Promise<Error | undefined> {
  const marked = discarded.get(client);
  if (marked) return marked;
  // 'I' idle, 'T' in a transaction, 'E' in a failed transaction, null before the first ReadyForQuery.
  // After an error the status can still read 'I': node-postgres rejects the query on ErrorResponse,
  // and the ReadyForQuery that says 'E' may not have arrived yet. So a failed `work` always rolls
  // back (the rollback waits for that ReadyForQuery; outside a transaction it is a no-op).
  const status = client.getTransactionStatus();
  if (status === 'I' && !failed) return undefined;
  try {
    // Bounded: a connection that does not answer is destroyed rather than waited for.
    await client.query({ text: 'rollback', query_timeout: SETTLE_TIMEOUT_MS } as pg.QueryConfig);
    return client.getTransactionStatus() === 'I'
      ? undefined
      : new Error('connection not idle after rollback');
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** Runs `work` on a client of `pool` and always gives the client back (see the file comment). */
export async function withPooledClient<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  // While lent out, the pool does not listen to the client: a connection that dies between
  // queries would be an uncaught 'error'. It is recorded instead, and the client destroyed.
  let lost: Error | undefined;
  const onError = (err: Error) => {
    lost ??= err;
  };
  let failed = true;
  try {
    client.on('error', onError);
    const result = await work(client);
    failed = false;
    return result;
  } finally {
    const failure = lost ?? (await settle(client, failed));
    client.removeListener('error', onError);
    client.release(lost ?? failure);
  }
}

/** A client held past one call (see `leasePooledClient`). */
export interface PooledClientLease {
  readonly client: pg.PoolClient;
  /** Gives the client back: idle, or destroyed when `failure` is given or its connection failed. */
  giveBack(failure?: unknown): void;
}

/**
 * For the few holders that must keep one connection across calls (a session-level advisory lock
 * held from one request to another): the client, and the one way to give it back. The holder's own
 * release path must run in a `finally`; a connection error while held destroys the client.
 */
export async function leasePooledClient(pool: pg.Pool): Promise<PooledClientLease> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (err: Error) => {
    lost ??= err;
  };
  client.on('error', onError);
  let given = false;
  return {
    client,
    giveBack(failure?: unknown) {
      if (given) return;
      given = true;
      client.removeListener('error', onError);
      client.release(
        lost ?? (failure instanceof Error ? failure : failure ? new Error(String(failure)) : undefined),
      );
    },
  };
}

export interface PoolStats {
  /** Clients open (idle + checked out). */
  total: number;
  idle: number;
  /** Clients lent out and not yet given back. */
  checkedOut: number;
  /** Callers waiting for a client. */
  waiting: number;
}

/** The pool's counters (for health reports and leak tests). */
export function poolStats(pool: pg.Pool): PoolStats {
  return {
    total: pool.totalCount,
    idle: pool.idleCount,
    checkedOut: pool.totalCount - pool.idleCount,
    waiting: pool.waitingCount,
  };
}
