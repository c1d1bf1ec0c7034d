/**
 * Change detection by logical replication (src/realtime/change-feed.ts) on the embedded server
 * (wal_level = logical): with a refresh interval no test waits for, a commit still reaches the
 * subscribers at once; idle, nothing runs; the slot lives only while there are subscribers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { Client } from 'graphql-ws';
import { MIN_REFRESH_GAP_MS } from '../../src/realtime/live-queries.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import type { TestPlatform } from '../support/platform.js';
import {
  bodies,
  NOTES,
  SCHEMA,
  sleep,
  sql,
  startRealtimePlatform,
  subscribe,
  userToken,
  wsClient,
  wsUrl,
} from './support.js';
import { eventually } from '../support/eventually.js';

let tp: TestPlatform;
let project: ProjectContext;
const clients: Client[] = [];

beforeAll(async () => {
  // Polling every 10 minutes: only the change feed can deliver within the test.
  ({ tp, project } = await startRealtimePlatform({ intervalMs: 600_000, replication: true }));
});

afterAll(async () => {
  for (const c of clients) await c.dispose();
  await tp?.close();
});

async function slots(): Promise<string[]> {
  const c = new pg.Client({ connectionString: project.superuserUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ slot_name: string }>(
      `select slot_name from pg_replication_slots where database = current_database() and starts_with(slot_name, 'strata_rt_')`,
    );
    return rows.map((r) => r.slot_name);
  } finally {
    await c.end();
  }
}

describe('change detection by logical replication', () => {
  it('a commit re-runs the live queries at once; a commit that leaves a result unchanged pushes nothing; idle, nothing runs', async () => {
    const c = wsClient(wsUrl(tp), {
      apikey: project.anonKey,
      Authorization: `Bearer ${await userToken(project, 'alice')}`,
    });
    clients.push(c);
    const s = subscribe(c, NOTES);
    await s.until((r) => bodies(r).join() === 'alice 1');
    await eventually(() => tp.realtime.stats().feeds === 1, { timeoutMs: 10_000, intervalMs: 20 });
    expect(await slots()).toHaveLength(1);

    const t0 = Date.now();
    await sql(project, `insert into public.note (owner, body) values ('alice', 'alice 2')`);
    await s.until((r) => bodies(r).join() === 'alice 1,alice 2', 0, 5_000);
    expect(Date.now() - t0).toBeLessThan(5_000);

    // Bob's write reaches Alice's query (a commit on a table it reads): it is re-run, or a probe
    // as Alice finds Bob's row invisible to her (visibility-probe.ts); her result is unchanged.
    const seen = s.results.length;
    const { executions: ran, probes } = tp.realtime.stats();
    await sql(project, `insert into public.note (owner, body) values ('bob', 'bob 2')`);
    await eventually(() => tp.realtime.stats().executions > ran || tp.realtime.stats().probes > probes, {
      timeoutMs: 5_000,
      intervalMs: 20,
    });
    await sleep(300);
    expect(s.results).toHaveLength(seen);

    // A burst of commits (40 updates of one row, one transaction each) costs one refresh per
    // gap (MIN_REFRESH_GAP_MS), not one per commit; the last result has the last value.
    const burst = tp.realtime.stats().executions;
    const started = Date.now();
    const writer = new pg.Client({ connectionString: project.superuserUrl });
    await writer.connect();
    try {
      for (let i = 0; i < 40; i++)
        await writer.query(`update public.note set body = 'burst ${i}' where id = 1`);
    } finally {
      await writer.end();
    }
    await s.until((r) => bodies(r)[0] === 'burst 39', 0, 5_000);
    const refreshes = tp.realtime.stats().executions - burst;
    expect(refreshes).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / MIN_REFRESH_GAP_MS) + 2);
    expect(refreshes).toBeLessThan(40);
    await sql(project, `update public.note set body = 'alice 1' where id = 1`);
    await s.until((r) => bodies(r).join() === 'alice 1,alice 2', s.results.length - 1, 5_000);

    // The feed changes nothing for writers: a table without a primary key (no replica identity)
    // still takes UPDATE and DELETE (a publication of all tables that publishes them would refuse).
    await sql(
      project,
      `create table public.plain_log (msg text); insert into public.plain_log values ('a');
       update public.plain_log set msg = 'b'; delete from public.plain_log;`,
    );
    await sleep(300);

    // Idle: no refresh at all.
    const idle = tp.realtime.stats().executions;
    await sleep(1_000);
    expect(tp.realtime.stats().executions).toBe(idle);

    // The last subscriber gone, the slot is dropped (no WAL kept for nobody).
    s.stop();
    await eventually(() => tp.realtime.stats().subscribers === 0, { timeoutMs: 10_000, intervalMs: 20 });
    await eventually(() => tp.realtime.stats().feeds === 0, { timeoutMs: 10_000, intervalMs: 20 });
    await eventually(async () => (await slots()).length === 0, { timeoutMs: 10_000, intervalMs: 100 }).catch(
      () => {},
    );
    expect(await slots()).toEqual([]);
  });
});

describe('a project with live subscribers', () => {
  it('can be deleted: its change feed and slot go with it', async () => {
    const other = await tp.platform.createProject({ name: 'short-lived', organizationId: 'default-org' });
    await sql(other, SCHEMA);
    const c = wsClient(wsUrl(tp, `/project/${other.ref}`), { apikey: other.anonKey });
    clients.push(c);
    const s = subscribe(c, NOTES);
    await s.until((r) => bodies(r).length === 2);
    await eventually(() => tp.realtime.stats().feeds === 1, { timeoutMs: 10_000, intervalMs: 20 });
    await expect(tp.platform.deleteProject(other.ref)).resolves.toBe(true);
    // Its subscriptions end with an error saying why (the feed's end makes a refresh, which finds
    // the project's pool closed).
    await eventually(() => s.error !== undefined, { timeoutMs: 10_000, intervalMs: 20 }).catch((e) => {
      throw new Error(
        `${e.message}: ${JSON.stringify(tp.realtime.stats())} ${JSON.stringify(s.results.slice(-1))}`,
      );
    });
    expect(s.error[0].message).toMatch(/^The project's database connection was closed/);
  });
});
