/**
 * One classification of "the database cannot be reached" for every API, checked against the
 * errors the real driver produces (refused port, server shut down under a session, a server
 * that never answers) and against what must NOT be taken for it (the server answering an error).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { inject } from 'vitest';
import { isDatabaseUnavailable } from '../../src/db/connection-errors.js';
import { freeTestPort } from '../support/free-port.js';

const url = inject('databaseUrl');

async function errorOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

let silent: Server;
const sockets: Socket[] = [];
let silentPort = 0;
beforeAll(async () => {
  // Accepts connections and never answers (a server gone from the network, or frozen).
  silent = createServer((s) => sockets.push(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const a = silent.address();
  silentPort = typeof a === 'object' && a ? a.port : 0;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => silent.close(r));
});

describe('isDatabaseUnavailable', () => {
  it('a refused connection (nothing listening)', async () => {
    const port = await freeTestPort();
    const c = new pg.Client({ connectionString: `postgresql://x:y@127.0.0.1:${port}/postgres` });
    expect(isDatabaseUnavailable(await errorOf(() => c.connect()))).toBe(true);
  });

  it('a server that never answers (connection timeout)', async () => {
    const c = new pg.Client({
      connectionString: `postgresql://x:y@127.0.0.1:${silentPort}/postgres`,
      connectionTimeoutMillis: 300,
    });
    c.on('error', () => {});
    expect(isDatabaseUnavailable(await errorOf(() => c.connect()))).toBe(true);
  });

  it('a session terminated by the server (57P01), and the client used afterwards', async () => {
    const victim = new pg.Client({ connectionString: url });
    victim.on('error', () => {});
    await victim.connect();
    const pid = (await victim.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid;
    const killer = new pg.Client({ connectionString: url });
    await killer.connect();
    const pending = errorOf(() => victim.query('select pg_sleep(30)'));
    await new Promise((r) => setTimeout(r, 200));
    await killer.query('select pg_terminate_backend($1)', [pid]);
    await killer.end();
    const err = await pending;
    expect((err as { code?: string }).code).toBe('57P01');
    expect(isDatabaseUnavailable(err)).toBe(true);
    expect(isDatabaseUnavailable(await errorOf(() => victim.query('select 1')))).toBe(true);
    await victim.end().catch(() => {});
  });

  it('a pool whose server went away', async () => {
    const port = await freeTestPort();
    const pool = new pg.Pool({ connectionString: `postgresql://x:y@127.0.0.1:${port}/postgres` });
    expect(isDatabaseUnavailable(await errorOf(() => pool.query('select 1')))).toBe(true);
    await pool.end();
  });

  it('codes and messages by table', () => {
    const e = (code: string | undefined, message = 'x') => Object.assign(new Error(message), { code });
    for (const code of [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      '57P01',
      '57P02',
      '57P03',
      '08006',
      '08001',
    ])
      expect(isDatabaseUnavailable(e(code)), code).toBe(true);
    expect(isDatabaseUnavailable(e(undefined, 'Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnavailable(e(undefined, 'Connection terminated due to connection timeout'))).toBe(true);
    expect(isDatabaseUnavailable(new AggregateError([e('ECONNREFUSED')]))).toBe(true);
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: e('ECONNRESET') }))).toBe(true);
  });

  it('the server answering an error is not "unavailable"', async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      for (const sql of ['select 1/0', 'select * from no_such_table', 'selec 1']) {
        const err = await errorOf(() => c.query(sql));
        expect(isDatabaseUnavailable(err), sql).toBe(false);
      }
      // A message that merely mentions a connection is not enough when the server gave a SQLSTATE.
      expect(
        isDatabaseUnavailable(Object.assign(new Error('Connection terminated'), { code: '23505' })),
      ).toBe(false);
      expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
      expect(isDatabaseUnavailable(null)).toBe(false);
      expect(isDatabaseUnavailable('ECONNREFUSED')).toBe(false);
    } finally {
      await c.end();
    }
  });
});
