// Load generation: autocannon (npm, in this process) or wrk (C, if on PATH; LOAD=wrk|autocannon).
// Closed loop: N connections, each sending the next request when the previous answer arrives.
// While a cell runs, the server's RSS is sampled from /proc every 200 ms.
import { spawnSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuMsOf, memoryOf, pgCpuByPid, pgCpuDelta } from './util.mjs';

export function pickLoadTool() {
  const want = process.env.LOAD;
  const hasWrk = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).status === 0;
  if (want === 'wrk' && !hasWrk) throw new Error('LOAD=wrk but wrk is not on PATH');
  if (want === 'autocannon') return 'autocannon';
  return hasWrk ? 'wrk' : 'autocannon';
}

/**
 * Runs one load cell; returns { rps, p50, p90, p99, max, requests, errors, non2xx, rssPeakMB,
 * cpuUsPerReq, pgCpuUsPerReq }: the last two are the server process's and PostgreSQL's CPU time
 * per request (from /proc), which a busy shared machine disturbs much less than req/s.
 */
export async function runLoad({
  tool,
  url,
  headers,
  body,
  connections,
  seconds,
  pid,
  pgPid = /** @type {number | undefined} */ (undefined),
  tmpDir,
}) {
  let rssPeakMB = 0;
  const sample = () => {
    const m = memoryOf(pid);
    if (m.rssMB > rssPeakMB) rssPeakMB = m.rssMB;
  };
  sample();
  const timer = setInterval(sample, 200);
  const cpu0 = cpuMsOf(pid);
  const pg0 = pgPid ? pgCpuByPid(pgPid) : undefined;
  try {
    const r =
      tool === 'wrk'
        ? await wrk({ url, headers, body, connections, seconds, tmpDir })
        : await cannon({ url, headers, body, connections, seconds });
    const cpuMs = cpuMsOf(pid) - cpu0;
    const pgMs = pg0 ? pgCpuDelta(pg0, pgCpuByPid(pgPid)) : NaN;
    sample();
    return {
      ...r,
      rssPeakMB,
      cpuUsPerReq: (cpuMs * 1000) / r.requests,
      pgCpuUsPerReq: (pgMs * 1000) / r.requests,
    };
  } finally {
    clearInterval(timer);
  }
}

async function cannon({ url, headers, body, connections, seconds }) {
  // autocannon's own histogram keeps whole milliseconds; record each response time (a float, from
  // process.hrtime) to get sub-millisecond percentiles.
  const times = [];
  const inst = autocannon({
    url,
    connections,
    duration: seconds,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    pipelining: 1,
  });
  inst.on('response', (_client, status, _bytes, responseTime) => {
    if (status >= 200 && status < 300) times.push(responseTime);
  });
  const r = await inst;
  times.sort((a, b) => a - b);
  const pct = (p) =>
    times.length ? times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))] : NaN;
  return {
    rps: r.requests.total / r.duration,
    p50: pct(50),
    p90: pct(90),
    p99: pct(99),
    max: times.length ? times[times.length - 1] : NaN,
    requests: r.requests.total,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
}

function wrk({ url, headers, body, connections, seconds, tmpDir }) {
  const script = join(tmpDir, `wrk-${process.pid}.lua`);
  const lua = [
    'wrk.method = "POST"',
    `wrk.body = ${luaString(body)}`,
    'wrk.headers["content-type"] = "application/json"',
    ...Object.entries(headers).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`),
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format("RESULT %f %f %f %f %f %d %d %d\\n", summary.requests / (summary.duration / 1e6),',
    '    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000,',
    '    summary.requests, e.connect + e.read + e.write + e.timeout, e.status))',
    'end',
  ].join('\n');
  writeFileSync(script, lua);
  return new Promise((resolve, reject) => {
    const p = spawn(
      'wrk',
      ['-t1', `-c${connections}`, `-d${Math.max(1, Math.round(seconds))}s`, '--latency', '-s', script, url],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    p.on('exit', () => {
      const m = /RESULT (\S+) (\S+) (\S+) (\S+) (\S+) (\d+) (\d+) (\d+)/.exec(out);
      if (!m) return reject(new Error(`wrk output not understood:\n${out}`));
      const n = m.slice(1).map(Number);
      resolve({
        rps: n[0],
        p50: n[1],
        p90: n[2],
        p99: n[3],
        max: n[4],
        requests: n[5],
        errors: n[6],
        non2xx: n[7],
      });
    });
  });
}

const luaString = (s) => JSON.stringify(s); // JSON string escapes are valid Lua escapes for this content
