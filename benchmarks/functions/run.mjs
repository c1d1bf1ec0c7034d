// Edge Functions benchmark: cold start (first request to a freshly deployed function: its worker
// is started when the deploy is saved, the request waits for what is left of that start), start on
// request (the same functions after their workers were reaped idle: Deno spawned, module loaded,
// answered, all in the request) and warm requests/s of a hello-world
// function at {project}/functions/v1/hello, side by side with the same handler on plain node:http
// in the same run (the floor). Goals: warm >= 0.7 of the floor, cold start < 300 ms.
// BENCH_QUICK=1 runs shorter. Prints a table and writes benchmarks/results/functions-<timestamp>.json.
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const QUICK = process.env.BENCH_QUICK === '1';
const DURATION = QUICK ? 5 : 15;
const CONNECTIONS = 16;
const COLD_RUNS = QUICK ? 3 : 7;
const here = fileURLToPath(new URL('.', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'strata-bench-functions-'));

const HELLO = `Deno.serve(() => {
  const body = JSON.stringify({ message: 'Hello World' });
  return new Response(body, { headers: { 'content-type': 'application/json' } });
});`;

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

function stop(child) {
  return new Promise((resolve) => {
    child.once('exit', resolve);
    child.send('stop');
  });
}

async function deploy(info, slug) {
  const form = new FormData();
  form.append(
    'metadata',
    JSON.stringify({ entrypoint_path: `supabase/functions/${slug}/index.ts`, name: slug, verify_jwt: true }),
  );
  form.append('file', new Blob([HELLO]), `supabase/functions/${slug}/index.ts`);
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

/** CPU ms (user + system) of process `pid` and all its descendants (the server and its Deno workers). */
function treeCpuMs(pid) {
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
  return { own: processCpuMs(pid) ?? 0, below };
}

/** Runs the load against `url` and measures the CPU the processes under `pid` spent per request. */
async function loadWithCpu(url, headers, pid) {
  const before = treeCpuMs(pid);
  const run = await load(url, headers);
  const after = treeCpuMs(pid);
  const us = (ms) => (ms * 1000) / run.requests.total;
  return {
    run,
    cpuUsPerRequest: us(after.own + after.below - before.own - before.below),
    ownUs: us(after.own - before.own),
    belowUs: us(after.below - before.below),
  };
}

const workerModule = await import('../../dist/functions/worker.js');
const IDLE_MS = 1500;
const platform = await start('server.mjs', {
  BENCH_DATA_DIR: join(work, 'data'),
  BENCH_IDLE_MS: String(IDLE_MS),
});
const floor = await start('floor.mjs');
try {
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

  // The floor first: the function's worker must not sit idle (reaped) between warm-up and load.
  const { run: floorRun, cpuUsPerRequest: floorCpu } = await loadWithCpu(floor.info.url, {}, floor.child.pid);
  await deploy(info, 'hello');
  for (let i = 0; i < 50; i++) await (await fetch(fnUrl('hello'), { headers: auth })).text();
  const {
    run: fnRun,
    cpuUsPerRequest: fnCpu,
    ownUs: serverCpu,
    belowUs: workerCpu,
  } = await loadWithCpu(fnUrl('hello'), auth, platform.child.pid);

  const result = {
    when: new Date().toISOString(),
    quick: QUICK,
    duration_s: DURATION,
    connections: CONNECTIONS,
    cold_start_ms: { runs: cold.map((x) => Math.round(x)), median: Math.round(median(cold)) },
    start_on_request_ms: { runs: spawn.map((x) => Math.round(x)), median: Math.round(median(spawn)) },
    bare_deno_start_ms: { runs: bare.map((x) => Math.round(x)), median: Math.round(median(bare)) },
    warm: {
      function_rps: Math.round(fnRun.requests.average),
      floor_rps: Math.round(floorRun.requests.average),
      ratio: +(fnRun.requests.average / floorRun.requests.average).toFixed(3),
      function_p50_ms: fnRun.latency.p50,
      function_p99_ms: fnRun.latency.p99,
      floor_p50_ms: floorRun.latency.p50,
      floor_p99_ms: floorRun.latency.p99,
      // CPU per request (server + its Deno workers vs the floor's process): what the load costs,
      // which a busy machine disturbs far less than req/s.
      function_cpu_us_per_request: Math.round(fnCpu),
      function_cpu_us_per_request_server: Math.round(serverCpu),
      function_cpu_us_per_request_worker: Math.round(workerCpu),
      floor_cpu_us_per_request: Math.round(floorCpu),
    },
    goals: { warm_ratio: 0.7, cold_start_ms: 300 },
  };
  console.log('\nEdge Functions (hello world)');
  console.log(
    `  cold start      median ${result.cold_start_ms.median} ms   runs ${result.cold_start_ms.runs.join(', ')} ms   (goal < 300 ms)`,
  );
  console.log(
    `  start on request median ${result.start_on_request_ms.median} ms   runs ${result.start_on_request_ms.runs.join(', ')} ms   (worker reaped idle, started by the request)`,
  );
  console.log(
    `  bare deno run   median ${result.bare_deno_start_ms.median} ms   (an empty script: the floor of any cold start here)`,
  );
  console.log(
    `  cold / bare     ${(result.cold_start_ms.median / result.bare_deno_start_ms.median).toFixed(2)}`,
  );
  console.log(
    `  warm function   ${result.warm.function_rps} req/s   p50 ${result.warm.function_p50_ms} ms   p99 ${result.warm.function_p99_ms} ms`,
  );
  console.log(
    `  floor node:http ${result.warm.floor_rps} req/s   p50 ${result.warm.floor_p50_ms} ms   p99 ${result.warm.floor_p99_ms} ms`,
  );
  console.log(`  warm ratio      ${result.warm.ratio} of the floor   (goal >= 0.7)`);
  console.log(
    `  CPU per request ${result.warm.function_cpu_us_per_request} µs (server ${result.warm.function_cpu_us_per_request_server} + worker ${result.warm.function_cpu_us_per_request_worker}) vs ${result.warm.floor_cpu_us_per_request} µs (floor)`,
  );
  const out = join(here, '..', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `functions-${Date.now()}.json`), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await stop(floor.child);
  await stop(platform.child);
  rmSync(work, { recursive: true, force: true });
}
