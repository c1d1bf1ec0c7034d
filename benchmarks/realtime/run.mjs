// Realtime benchmark (issue 33): GraphQL live queries of a chat app, many documents × many users,
// under a steady rate of writes, and in the same run, on the same server, data, users and writes,
// a naive baseline that polls every subscriber's query on its own.
//
// Workload (workload.mjs): org 1─n room 1─n message; RLS lets an authenticated user read the rooms
// and messages of the org in its JWT (auth.jwt() -> 'app_metadata' ->> 'org_id'). 20 orgs × 10
// rooms × 100 seeded messages. BENCH_RT_SUBS live queries over SUBS/10 users (each its own sub and
// JWT, one WebSocket each, graphql-ws' createClient): per user the last 20 messages of 3 rooms, the
// message count + newest message of the same 3 rooms, its own last 10 messages in 2 of them, its
// org's rooms with their newest message, and its org's 10 newest messages.
// Writes (writer.mjs): BENCH_RT_RATE per second, one at a time as the superuser, 90 % INSERT of a
// message into a random room, 10 % UPDATE of a room's newest message; each body stamped with the
// write's sequence number.
//
// Phases, one after the other against one platform (server.mjs, a child process):
// 1. strata: the live queries subscribed (ramp-up, before any write), then writes for
//    BENCH_RT_WARMUP s, then BENCH_RT_SECONDS s measured, then a drain (writes go on) until every
//    delivery the window's writes call for has arrived or BENCH_RT_DRAIN_MAX s passed.
// 2. naive (poller.mjs): the same queries as HTTP POST {project}/graphql/v1, each with its user's
//    JWT, each polled on its own every BENCH_RT_POLL_MS (1 s: Hasura's default), as fast as it can
//    when it cannot keep up (the achieved poll rate is reported); the same warm-up, window, drain.
// Measured per phase over the window: change-to-client latency (deliveries.mjs: receive time of
// the first result reflecting a write − the writer's commit acknowledgement) p50/p90/p99 over every
// (live query, write) pair whose result must change; CPU per change of PostgreSQL (every postgres
// process below the server, from /proc, reaped backends included) and of the server process; the
// server's RSS (peak and mean, sampled every 200 ms); statements and transactions per change.
// The live-query clients and the poller are child processes of their own (their CPU is neither).
// Goals (10,000 live queries, 100 changes/s, 2 cores): p50 ≤ 100 ms, p99 ≤ 1 s, PostgreSQL CPU
// per change ≤ 1/20 of the naive baseline's, server RSS ≤ 300 MB.
//
// BENCH_QUICK unset or 1: 2,000 live queries, 20 s; BENCH_QUICK=0: 10,000, 60 s. Knobs:
// BENCH_RT_SUBS, BENCH_RT_RATE, BENCH_RT_SECONDS, BENCH_RT_WARMUP, BENCH_RT_DRAIN_MAX,
// BENCH_RT_UPDATE_SHARE, BENCH_RT_PHASES (strata,naive: one of them alone), BENCH_RT_POLL_MS,
// BENCH_RT_POLL_CONCURRENCY, BENCH_RT_CLIENT_PROCS, BENCH_RT_RAMP_BATCH (users per ramp step),
// and every STRATA_REALTIME_* setting, passed to the server. Prints a table and writes
// benchmarks/results/realtime-<timestamp>.json (or BENCH_OUT), with `summaryLine`.
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ask, firstMessage, forkChild, sleep, stopAll, stopChild } from './children.mjs';
import { mergeLatencies } from './deliveries.mjs';
import { cpuMs, postgresCpuMs, rssMiB, sampleRss } from './procfs.mjs';
import { GOALS, report } from './report.mjs';
import { ORGS, ROOMS_PER_ORG, SCHEMA, planSubscriptions, seedSql, userTokens } from './workload.mjs';

const env = process.env;
const num = (name, dflt) => (env[name] !== undefined && env[name] !== '' ? Number(env[name]) : dflt);
const QUICK = env.BENCH_QUICK !== '0';
const O = {
  subs: num('BENCH_RT_SUBS', QUICK ? 2000 : 10_000),
  rate: num('BENCH_RT_RATE', 100),
  seconds: num('BENCH_RT_SECONDS', QUICK ? 20 : 60),
  warmup: num('BENCH_RT_WARMUP', QUICK ? 5 : 10),
  drainMax: num('BENCH_RT_DRAIN_MAX', QUICK ? 15 : 30),
  updateShare: num('BENCH_RT_UPDATE_SHARE', 0.1),
  phases: (env.BENCH_RT_PHASES ?? 'strata,naive').split(',').map((p) => p.trim()),
  pollMs: num('BENCH_RT_POLL_MS', 1000),
  pollConcurrency: num('BENCH_RT_POLL_CONCURRENCY', 16),
  clientProcs: Math.max(1, num('BENCH_RT_CLIENT_PROCS', 1)),
  rampBatch: Math.max(1, num('BENCH_RT_RAMP_BATCH', 20)),
};

const work = mkdtempSync(join(tmpdir(), 'strata-bench-realtime-'));
let server;
let db;
let interrupted = false;

async function cleanup() {
  await db?.end().catch(() => {});
  db = undefined;
  await stopAll(server);
  rmSync(work, { recursive: true, force: true });
}
process.on('SIGINT', () => {
  if (interrupted) return;
  interrupted = true;
  console.error('realtime bench: interrupted, stopping');
  void cleanup().finally(() => process.exit(130));
});

const log = (line) => console.log(`[realtime ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** CPU of the server process and of its PostgreSQL, live-query counters, transactions: now. */
async function sample() {
  const t = Date.now();
  const serverMs = cpuMs(server.pid);
  const pgCpu = postgresCpuMs(server.pid);
  const { stats, memory } = await ask(server, 'stats', 'stats').catch(() => ({}));
  const { rows } = await db.query(
    'select xact_commit::float8 as x from pg_catalog.pg_stat_database where datname = pg_catalog.current_database()',
  );
  return { t, serverMs, pgMs: pgCpu.ms, pgProcesses: pgCpu.processes, stats, memory, xact: rows[0].x };
}

/** Splits the plan over the client processes by user (a user's live queries stay together). */
function split(plan, parts) {
  /** @type {any[][]} */
  const out = Array.from({ length: parts }, () => []);
  for (const s of plan) out[s.user % parts].push(s);
  return out;
}

/** Each client process's counters (CPU ms, results; the poller's poll count). */
const statusOf = (clients) => Promise.all(clients.map((c) => ask(c, { cmd: 'status' }, 'status')));

/** Writes at the rate, warm-up, measured window, drain; `clients` answer status/pending/finish. */
async function measure(name, clients, seqStart) {
  const writer = forkChild('writer.mjs');
  await ask(
    writer,
    { cmd: 'start', url: info.superuserUrl, rate: O.rate, users, seqStart, updateShare: O.updateShare },
    'started',
  );
  log(`${name}: writing ${O.rate}/s, warm-up ${O.warmup} s`);
  await sleep(O.warmup * 1000);
  const s0 = await sample();
  const st0 = await statusOf(clients);
  const rss = sampleRss(server.pid);
  log(`${name}: measuring ${O.seconds} s`);
  await sleep(O.seconds * 1000);
  const s1 = await sample();
  const st1 = await statusOf(clients);
  const rssStats = rss.stop();
  const windowLog = (await ask(writer, { cmd: 'log' }, 'log')).log.filter((w) => w.t >= s0.t && w.t <= s1.t);
  // Drain: writes go on (the window's last writes see the same load) until nothing is pending.
  const drainStart = Date.now();
  let pending = 0;
  for (;;) {
    const answers = await Promise.all(
      clients.map((c) => ask(c, { cmd: 'pending', log: windowLog }, 'pending')),
    );
    pending = answers.reduce((s, a) => s + a.pending, 0);
    if (pending === 0 || Date.now() - drainStart > O.drainMax * 1000) break;
    await sleep(1000);
  }
  const drainMs = Date.now() - drainStart;
  log(`${name}: drained in ${(drainMs / 1000).toFixed(1)} s (${pending} deliveries still pending)`);
  const { behindMs } = await ask(writer, { cmd: 'stop' }, 'stopped');
  const finished = await Promise.all(
    clients.map((c) => ask(c, { cmd: 'finish', log: windowLog }, 'finished')),
  );
  const windowS = (s1.t - s0.t) / 1000;
  const changes = windowLog.length;
  const sum = (k) => finished.reduce((s, f) => s + (f[k] ?? 0), 0);
  return {
    window_s: +windowS.toFixed(2),
    changes,
    change_rate: +(changes / windowS).toFixed(1),
    updates: windowLog.filter((w) => w.kind === 'update').length,
    writer_max_behind_ms: Math.round(behindMs),
    latency: mergeLatencies(finished),
    drain_s: +(drainMs / 1000).toFixed(1),
    pg_cpu_ms_per_change: +((s1.pgMs - s0.pgMs) / changes).toFixed(3),
    server_cpu_ms_per_change: +((s1.serverMs - s0.serverMs) / changes).toFixed(3),
    pg_cpu_cores: +((s1.pgMs - s0.pgMs) / (s1.t - s0.t)).toFixed(2),
    server_cpu_cores: +((s1.serverMs - s0.serverMs) / (s1.t - s0.t)).toFixed(2),
    client_cpu_cores: +(st1.reduce((a, x, i) => a + x.cpuMs - st0[i].cpuMs, 0) / (s1.t - s0.t)).toFixed(2),
    pg_processes: s1.pgProcesses,
    server_rss_mib: {
      peak: Math.round(rssStats.peakMiB),
      mean: Math.round(rssStats.meanMiB),
      samples: rssStats.samples,
    },
    xact_per_change: +((s1.xact - s0.xact) / changes).toFixed(2),
    statements_per_change:
      s0.stats && s1.stats ? +((s1.stats.executions - s0.stats.executions) / changes).toFixed(2) : undefined,
    merged_sets_per_change:
      s0.stats && s1.stats
        ? +(((s1.stats.merged ?? 0) - (s0.stats.merged ?? 0)) / changes).toFixed(2)
        : undefined,
    refreshed_sets_per_change:
      s0.stats && s1.stats
        ? +((s1.stats.refreshedSets - s0.stats.refreshedSets) / changes).toFixed(2)
        : undefined,
    probes_per_change:
      s0.stats && s1.stats
        ? +(((s1.stats.probes ?? 0) - (s0.stats.probes ?? 0)) / changes).toFixed(2)
        : undefined,
    live_stats: s1.stats,
    /** process.memoryUsage() of the server at the window's end, MiB. */
    server_memory_end_mib: s1.memory,
    results_received: sum('results'),
    foreign_rows: sum('foreignRows'),
    errors: sum('errors'),
    first_error: finished.find((f) => f.firstError)?.firstError,
    window_status: { start: st0[0], end: st1[0] },
  };
}

/** Phase 1: the live queries subscribed (before any write), then measured; the clients closed. */
async function livePhase(planned, tokens, gqlUrl) {
  const parts = split(planned.plan, O.clientProcs);
  const subscribers = parts.map(() => forkChild('subscribers.mjs'));
  const t0 = Date.now();
  let lastReport = 0;
  const setup = (i) => ({
    cmd: 'setup',
    url: gqlUrl.replace(/^http/, 'ws'),
    anonKey: info.anonKey,
    tokens,
    plan: parts[i],
    batchUsers: O.rampBatch,
  });
  const progress = (i) => (m) => {
    if (m?.type === 'progress' && Date.now() - lastReport > 5000) {
      lastReport = Date.now();
      log(`strata: ${m.opened} live queries open (client process ${i})`);
    }
  };
  const readies = await Promise.all(subscribers.map((c, i) => ask(c, setup(i), 'ready', progress(i))));
  const subscribed = readies.reduce((s, r) => s + r.subscribed, 0);
  const refused = readies.reduce((s, r) => s + r.refused, 0);
  const connections = readies.reduce((s, r) => s + r.connections, 0);
  const rampMs = Date.now() - t0;
  const rssAfterRamp = Math.round(rssMiB(server.pid));
  log(`strata: ${subscribed} live queries over ${connections} WebSockets in ${(rampMs / 1000).toFixed(1)} s`);
  if (refused)
    log(`strata: ${refused} subscriptions refused: ${readies.find((r) => r.firstError)?.firstError}`);
  if (refused > planned.plan.length * 0.01)
    throw new Error(`${refused} of ${planned.plan.length} subscriptions refused`);
  const strata = await measure('strata', subscribers, 1);
  await Promise.all(subscribers.map((c) => stopChild(c)));
  return {
    subscribed,
    refused,
    connections,
    ramp_s: +(rampMs / 1000).toFixed(1),
    server_rss_after_ramp_mib: rssAfterRamp,
    ...strata,
  };
}

/** Phase 2: the naive baseline, polling the same queries (seqs from 10,000,000 on). */
async function naivePhase(planned, tokens, gqlUrl) {
  await sleep(2000);
  const poller = forkChild('poller.mjs');
  const setup = {
    cmd: 'setup',
    url: gqlUrl,
    anonKey: info.anonKey,
    tokens,
    plan: planned.plan,
    intervalMs: O.pollMs,
    concurrency: O.pollConcurrency,
  };
  await ask(poller, setup, 'ready');
  await ask(poller, { cmd: 'start' }, 'started');
  const naive = await measure('naive', [poller], 10_000_000);
  await stopChild(poller);
  const { start, end } = naive.window_status;
  const polls = end.polls - start.polls;
  naive.polls_per_s = Math.round(polls / naive.window_s);
  naive.polls_per_s_target = Math.round((planned.plan.length * 1000) / O.pollMs);
  naive.failed_polls = end.failed - start.failed;
  naive.pg_cpu_ms_per_poll = +((naive.pg_cpu_ms_per_change * naive.changes) / polls).toFixed(3);
  // What PostgreSQL would spend per change if every query were polled at the interval.
  naive.pg_cpu_ms_per_change_at_target = +(
    (naive.pg_cpu_ms_per_poll * naive.polls_per_s_target) /
    naive.change_rate
  ).toFixed(3);
  return naive;
}

let info;
let users;
const result = {
  when: new Date().toISOString(),
  quick: QUICK,
  node: process.version,
  cpus: Number(execSync('nproc', { encoding: 'utf8' }).trim()),
  commit: (() => {
    try {
      return execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    } catch {
      return undefined;
    }
  })(),
  options: O,
  goals: GOALS,
};
try {
  // The per-project limit (STRATA_REALTIME_MAX_PER_PROJECT, 10,000 by default) must hold them all.
  const serverEnv = { BENCH_DATA_DIR: join(work, 'data') };
  if (!env.STRATA_REALTIME_MAX_PER_PROJECT && O.subs > 10_000)
    serverEnv.STRATA_REALTIME_MAX_PER_PROJECT = String(O.subs);
  server = forkChild('server.mjs', serverEnv);
  info = await firstMessage(server);
  result.server_realtime_config = info.realtime;
  log(`platform up at ${info.url}`);
  db = new pg.Client({ connectionString: info.superuserUrl, application_name: 'bench-control' });
  await db.connect();
  const planned = planSubscriptions(O.subs);
  users = planned.users;
  await db.query(SCHEMA);
  await db.query(seedSql(users));
  const tokens = await userTokens(info.jwtSecret, users);
  result.workload = {
    live_queries: planned.plan.length,
    users,
    orgs: ORGS,
    rooms: ORGS * ROOMS_PER_ORG,
    seeded_messages: Number((await db.query('select count(*) from public.message')).rows[0].count),
    per_document: {},
  };
  for (const s of planned.plan)
    result.workload.per_document[s.doc] = (result.workload.per_document[s.doc] ?? 0) + 1;
  const gqlUrl = `${info.url}/project/${info.ref}/graphql/v1`;

  result.server_rss_idle_mib = Math.round(rssMiB(server.pid));

  if (O.phases.includes('strata')) result.strata = await livePhase(planned, tokens, gqlUrl);
  if (O.phases.includes('naive')) result.naive = await naivePhase(planned, tokens, gqlUrl);
  report(result);
} catch (err) {
  // After Ctrl-C the children are stopping: what fails then is not news.
  if (!interrupted) {
    console.error(`realtime bench failed: ${err.stack ?? err}`);
    process.exitCode = 1;
  }
} finally {
  if (!interrupted) await cleanup();
}
