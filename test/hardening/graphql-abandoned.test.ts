/**
 * A client that goes away while its GraphQL request runs in PostgreSQL. A query's statement is
 * cancelled at once (it would otherwise hold a pooled connection until it ends or times out), the
 * connection is destroyed rather than reused, and the next request is served. A mutation runs to
 * its end, as it would behind pg_graphql.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settledCheckedOut, startGraphQLPlatform, type GraphQLPlatform } from './graphql-platform.js';
import { eventually } from '../support/eventually.js';

let gp: GraphQLPlatform;

async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: gp.project.superuserUrl });
  await c.connect();
  try {
    return (await c.query<T>(text)).rows;
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  gp = await startGraphQLPlatform();
  await sql(`
    create table public.ran (id serial primary key, at timestamptz not null default now());
    create function public.slow_read(s int) returns int language plpgsql stable as
      $$ begin perform pg_sleep(s); return s; end $$;
    create function public.slow_write(s int) returns int language plpgsql volatile as
      $$ begin perform pg_sleep(s); insert into public.ran default values; return s; end $$;
    grant select, insert on public.ran to anon;
    grant usage on all sequences in schema public to anon;
    grant execute on function public.slow_read(int), public.slow_write(int) to anon;`);
});
afterAll(async () => {
  await gp?.close();
});

/** Sends `query`; the returned function drops the connection. */
function send(query: string): () => Promise<void> {
  const controller = new AbortController();
  const sent = fetch(gp.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', apikey: gp.project.anonKey },
    body: JSON.stringify({ query }),
    signal: controller.signal,
  }).catch(() => undefined);
  return async () => {
    controller.abort();
    await sent;
  };
}

/** The backends of this database running `fn` (other than this one's). */
const runningPids = (fn: string) =>
  sql<{ pid: number }>(
    `select pid from pg_stat_activity
      where datname = current_database() and state = 'active' and query like '%${fn}%'
        and pid <> pg_backend_pid()`,
  ).then((rows) => rows.map((r) => r.pid));

const alive = (pid: number) =>
  sql(`select 1 from pg_stat_activity where pid = ${Number(pid)}`).then((r) => r.length > 0);

describe('a client that goes away mid-request', () => {
  it("a query's statement is cancelled and its connection closed; the next request is served", async () => {
    const drop = send('{ slowRead(s: 30) }');
    let pid: number | undefined;
    await eventually(
      async () => {
        [pid] = await runningPids('slow_read');
        return pid !== undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50, what: 'the statement runs' },
    );
    await drop();
    // Cancelled (not left to run 30 s), and its connection is not reused: a late cancel signal
    // could otherwise reach the next request's statement.
    await eventually(async () => (await runningPids('slow_read')).length === 0, {
      timeoutMs: 5_000,
      intervalMs: 50,
      what: 'the statement is cancelled',
    });
    await eventually(async () => !(await alive(pid as number)), {
      timeoutMs: 5_000,
      intervalMs: 50,
      what: 'its connection is closed',
    });
    expect(await settledCheckedOut(gp)).toBe(0);
    expect(await gp.post({ query: '{ slowRead(s: 0) }' })).toEqual({
      status: 200,
      json: { data: { slowRead: 0 } },
    });
  });

  it('a mutation runs to its end', async () => {
    const drop = send('mutation { slowWrite(s: 2) }');
    await eventually(async () => (await runningPids('slow_write')).length === 1, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'the mutation runs',
    });
    await drop();
    await new Promise((r) => setTimeout(r, 500));
    expect(await runningPids('slow_write')).toHaveLength(1);
    await eventually(async () => (await sql('select id from public.ran')).length === 1, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'the mutation commits',
    });
    expect(await settledCheckedOut(gp)).toBe(0);
  });
});
