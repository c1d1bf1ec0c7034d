// Edge Functions benchmark: cold start (first request to a freshly deployed function: its worker
// is started when the deploy is saved, the request waits for what is left of that start), start on
// request (the same functions after their workers were reaped idle: Deno spawned, module loaded,
// answered, all in the request) and warm requests/s of a hello-world function at
// {project}/functions/v1/hello, side by side, in the same run, with two floors:
// - the proxied floor (proxied-floor.mjs): the same handler on Deno behind a bare node:http + undici
//   proxy that does nothing else — the cheapest design with the hop Strata needs;
// - the node floor (floor.mjs): the same handler on plain node:http, no hop at all (for scale).
// And Strata's server CPU per warm call: process.cpuUsage() of the server process (reported by
// that process over IPC) over the measured window, divided by the requests answered.
// Goals: warm >= 0.7 of the proxied floor, server CPU <= 50 µs per call, cold start < 50 ms median.
// BENCH_QUICK=1 runs shorter. Prints a table and writes benchmarks/results/functions-<timestamp>.json
// (or BENCH_OUT).
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { HELLO_FUNCTION } from './hello.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const DURATION = QUICK ? 5 : 15;
const CONNECTIONS = 16;
const COLD_RUNS = QUICK ? 3 : 7;
const GOALS = { warm_ratio_proxied_floor: 0.7, server_cpu_us_per_call: 50, cold_start_ms: 50 };
const here = fileURLToPath(new URL('.', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'strata-bench-functions-'));

function start(file, env = {}) {
  const child = fork(join(here, file), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (info) => resolve({ child, info }));
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
}

/** Asks a child to stop; kills it if it has not exited 15 s later. */
function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    child.send('stop');
  });
}

/** The CPU time (µs, user + system) the child process reports for itself. */
function ownCpuUs(child) {
  return new Promise((resolve) => {
    const on = (m) => {
      if (m && typeof m === 'object' && 'cpu' in m) {
        child.off('message', on);
        resolve(m.cpu);
      }
    };
    child.on('message', on);
    child.send('cpu');
  });
}

async function deploy(info, slug) {
  const form = new FormData();
  form.append(
    'metadata',
    JSON.stringify({ entrypoint_path: `supabase/functions/${slug}/index.ts`, name: slug, verify_jwt: true }),
  );
  form.append('file', new Blob([HELLO_FUNCTION]), `supabase/functions/${slug}/index.ts`);
  const res = await fetch(`${info.url}/v1/projects/${info.ref}/functions/deploy?slug=${slug}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${info.accessToken}` },
    body: form,
  });
  if (res.status !== 201) throw new Error(`deploy ${slug}: ${res.status} ${await res.text()}`);
}

function load(url, headers) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers }, (err, result) => {
      if (err) reject(err);
      else if (result.non2xx > 0 || result.errors > 0)
        reject(new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`));
      else resolve(result);
    });
  });
}

/** Sequential requests before a load, so each target's JIT and connections are warm. */
async function warm(url, headers) {
  for (let i = 0; i < 50; i++) {
    const res = await fetch(url, { headers });
    const text = await res.text();
    if (res.status !== 200 || !text.includes('Hello World')) throw new Error(`${url}: ${res.status} ${text}`);
  }
}

/** The floor of a cold start: a bare `deno run` of an empty script on this machine, now. */
async function bareDeno() {
  const { denoBinary } = await import('../../dist/functions/deno-binary.js');
  const { execFileSync } = await import('node:child_process');
  const script = join(work, 'empty.js');
  writeFileSync(script, '');
  const t = performance.now();
  execFileSync(denoBinary(), ['run', '--quiet', '--no-config', script], {
    env: { DENO_DIR: join(work, 'deno-dir'), PATH: '' },
  });
  return performance.now() - t;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** CPU ms (user + system) of all processes below `pid` (Deno workers, the embedded database). */
function cpuBelowMs(pid) {
  const { processCpuMs } = workerModule;
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {}
  }
  let below = 0;
  const walk = (p) => {
    below += processCpuMs(p) ?? 0;
    for (const c of children.get(p) ?? []) walk(c);
  };
  for (const c of children.get(pid) ?? []) walk(c);
  return below;
}

/**
 * Runs the load against `url` and measures CPU per request: the target process's own (it reports
 * its process.cpuUsage() over IPC before and after) and that of the processes below it (/proc).
 */
async function loadWithCpu(url, headers, child) {
  const below0 = cpuBelowMs(child.pid);
  const own0 = await ownCpuUs(child);
  const run = await load(url, headers);
  const own1 = await ownCpuUs(child);
  const below1 = cpuBelowMs(child.pid);
  const n = run.requests.total;
  const ownUs = (own1 - own0) / n;
  const belowUs = ((below1 - below0) * 1000) / n;
  return { run, ownUs, belowUs };
}

const workerModule = await import('../../dist/functions/worker.js');
const IDLE_MS = 1500;
/** Every child started, stopped at the end (also when a later one fails to start). */
const started = [];
const startTracked = async (file, env) => {
  const s = await start(file, env);
  started.push(s.child);
  return s;
};
try {
  const platform = await startTracked('server.mjs', {
    BENCH_DATA_DIR: join(work, 'data'),
    BENCH_IDLE_MS: String(IDLE_MS),
  });
  const floor = await startTracked('floor.mjs');
  const proxied = await startTracked('proxied-floor.mjs');
  const { info } = platform;
  const auth = { authorization: `Bearer ${info.anonKey}` };
  const fnUrl = (slug) => `${info.url}/project/${info.ref}/functions/v1/${slug}`;

  // Cold starts: each a new function, first request timed end to end.
  const cold = [];
  for (let i = 0; i < COLD_RUNS; i++) {
    const slug = `cold-${i}`;
    await deploy(info, slug);
    const t = performance.now();
    const res = await fetch(fnUrl(slug), { headers: auth });
    await res.text();
    cold.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`cold ${slug}: ${res.status}`);
  }

  // Start on request: the workers above are reaped once idle (reaper runs each second).
  await new Promise((r) => setTimeout(r, IDLE_MS + 2500));
  const spawn = [];
  for (let i = 0; i < COLD_RUNS; i++) {
    const t = performance.now();
    const res = await fetch(fnUrl(`cold-${i}`), { headers: auth });
    await res.text();
    spawn.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`spawn cold-${i}: ${res.status}`);
  }

  const bare = [];
  for (let i = 0; i < COLD_RUNS; i++) bare.push(await bareDeno());

  // The floors first: the function's worker must not sit idle (reaped) between warm-up and load.
  await warm(floor.info.url, {});
  const nodeFloor = await loadWithCpu(floor.info.url, {}, floor.child);
  await warm(proxied.info.url, auth);
  const proxiedFloor = await loadWithCpu(proxied.info.url, auth, proxied.child);
  await deploy(info, 'hello');
  await warm(fnUrl('hello'), auth);
  const strata = await loadWithCpu(fnUrl('hello'), auth, platform.child);

  const rps = (x) => Math.round(x.run.requests.average);
  const ratio = (a, b) => +(a.run.requests.average / b.run.requests.average).toFixed(3);
  const target = (x) => ({
    rps: rps(x),
    p50_ms: x.run.latency.p50,
    p99_ms: x.run.latency.p99,
    requests: x.run.requests.total,
    // CPU per request of the process itself and of the processes below it: what the load costs,
    // which a busy machine disturbs far less than req/s.
    cpu_us_per_request_own: Math.round(x.ownUs),
    cpu_us_per_request_below: Math.round(x.belowUs),
  });
  const result = {
    when: new Date().toISOString(),
    quick: QUICK,
    node: process.version,
    duration_s: DURATION,
    connections: CONNECTIONS,
    proxied_floor_transport: proxied.info.transport,
    cold_start_ms: { runs: cold.map((x) => Math.round(x)), median: Math.round(median(cold)) },
    start_on_request_ms: { runs: spawn.map((x) => Math.round(x)), median: Math.round(median(spawn)) },
    bare_deno_start_ms: { runs: bare.map((x) => Math.round(x)), median: Math.round(median(bare)) },
    warm: {
      // own: the Strata server process (IPC cpuUsage); below: its Deno workers and embedded database.
      strata: target(strata),
      // own: the bare proxy; below: its Deno process.
      proxied_floor: target(proxiedFloor),
      node_floor: target(nodeFloor),
      strata_over_proxied_floor: ratio(strata, proxiedFloor),
      strata_over_node_floor: ratio(strata, nodeFloor),
    },
    // What `npm run bench` reads (benchmarks/run-all.mjs).
    summary: {
      warm_strata_over_proxied_floor: ratio(strata, proxiedFloor),
      server_cpu_us_per_call: Math.round(strata.ownUs),
      cold_start_median_ms: Math.round(median(cold)),
    },
    goals: GOALS,
  };
  report(result);
} finally {
  for (const child of started.reverse()) await stop(child);
  rmSync(work, { recursive: true, force: true });
}

function report(r) {
  const w = r.warm;
  const line = (name, t) =>
    `  ${name.padEnd(22)} ${String(t.rps).padStart(6)} req/s   p50 ${t.p50_ms} ms   p99 ${t.p99_ms} ms   CPU/req ${t.cpu_us_per_request_own} µs own + ${t.cpu_us_per_request_below} µs below`;
  console.log(`\nEdge Functions (hello world)${r.quick ? ', QUICK: smoke check, not a measurement' : ''}`);
  console.log(
    `  cold start      median ${r.cold_start_ms.median} ms   runs ${r.cold_start_ms.runs.join(', ')} ms   (goal < ${GOALS.cold_start_ms} ms)`,
  );
  console.log(
    `  start on request median ${r.start_on_request_ms.median} ms   runs ${r.start_on_request_ms.runs.join(', ')} ms   (worker reaped idle, started by the request)`,
  );
  console.log(
    `  bare deno run   median ${r.bare_deno_start_ms.median} ms   (an empty script: the floor of any cold start here)`,
  );
  console.log(`  cold / bare     ${(r.cold_start_ms.median / r.bare_deno_start_ms.median).toFixed(2)}`);
  console.log(`  warm, c=${CONNECTIONS}, ${DURATION} s each:`);
  console.log(line('strata', w.strata));
  console.log(line(`proxied floor (${r.proxied_floor_transport})`, w.proxied_floor));
  console.log(line('node floor', w.node_floor));
  console.log(
    `  warm strata/proxied-floor ${w.strata_over_proxied_floor} (goal >= ${GOALS.warm_ratio_proxied_floor}); strata/node-floor ${w.strata_over_node_floor}`,
  );
  console.log(
    `  server CPU per warm call ${r.summary.server_cpu_us_per_call} µs (goal <= ${GOALS.server_cpu_us_per_call}); the bare proxy's ${w.proxied_floor.cpu_us_per_request_own} µs`,
  );
  const file =
    process.env.BENCH_OUT ?? join(here, '..', 'results', `functions-${r.when.replace(/[:.]/g, '-')}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
  console.log(`\nwrote ${file}`);
}
