// npm run bench: every benchmark (graphql, functions, storage, and realtime once
// benchmarks/realtime/run.mjs exists), each as a child process, in quick mode unless
// BENCH_QUICK=0 (the full runs). Each bench writes its results JSON where BENCH_OUT says; this
// script reads the headline numbers from it and prints, as its last lines, one line per area:
//   graphql: worst cell strata/floor 0.93 (goal 0.95); nested c=8 strata/postgraphile 3.10 (goal 3.00)
//   functions: warm strata/proxied-floor 0.33 (goal 0.70); server cpu per call 115 us (goal 50)
//   storage: upload strata/node-floor 0.40 (goal 0.80); download 0.70 (goal 0.90); peak rss 164 MiB (goal 150)
// An area that fails prints `<area>: failed (<reason>)` and the exit status is 1.
// BENCH_AREAS=functions,storage runs some areas only; BENCH_AREA_TIMEOUT_MIN caps each area
// (default 30 min quick, 180 min full). A realtime bench gives its line in its JSON: `summaryLine`.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const QUICK = process.env.BENCH_QUICK !== '0';
const TIMEOUT_MIN = Number(process.env.BENCH_AREA_TIMEOUT_MIN ?? (QUICK ? 30 : 180));
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const resultsDir = join(here, 'results');

const ratio = (x) => x.toFixed(2);

/** A number the results must hold; throws (the area fails) when it is missing. */
function need(value, what) {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`no ${what} in its results`);
  return value;
}

/** Each area: how its summary line is made from its results JSON. */
const AREAS = {
  graphql(r) {
    const h = r.headline ?? {};
    const worst = need(h.worstStrataOverFloor?.value, 'strata/floor cell');
    const nested = need(h.nestedC8StrataOverPostgraphile, 'nested c=8 strata/postgraphile');
    return `worst cell strata/floor ${ratio(worst)} (goal ${ratio(h.goals.cellStrataOverFloor)}); nested c=8 strata/postgraphile ${ratio(nested)} (goal ${ratio(h.goals.nestedC8StrataOverPostgraphile)})`;
  },
  functions(r) {
    const s = r.summary ?? {};
    const warm = need(s.warm_strata_over_proxied_floor, 'warm strata/proxied-floor');
    const cpu = need(s.server_cpu_us_per_call, 'server cpu per call');
    return `warm strata/proxied-floor ${ratio(warm)} (goal ${ratio(r.goals.warm_ratio_proxied_floor)}); server cpu per call ${Math.round(cpu)} us (goal ${r.goals.server_cpu_us_per_call})`;
  },
  storage(r) {
    const s = r.summary ?? {};
    const up = need(s.uploadOverFloor, 'upload strata/node-floor');
    const down = need(s.downloadOverFloor, 'download strata/node-floor');
    const rss = need(s.peakRssMiB, 'peak rss');
    return `upload strata/node-floor ${ratio(up)} (goal ${ratio(r.goals.uploadOverFloor)}); download ${ratio(down)} (goal ${ratio(r.goals.downloadOverFloor)}); peak rss ${Math.round(rss)} MiB (goal ${r.goals.peakRssMiB})`;
  },
  realtime(r) {
    if (typeof r.summaryLine !== 'string' || !r.summaryLine) throw new Error('no summaryLine in its results');
    // The bench writes its line whole (`realtime: …`); the area's name is put in front below.
    return r.summaryLine.replace(/^realtime:\s*/, '');
  },
};

const wanted = process.env.BENCH_AREAS?.split(',').map((a) => a.trim());
const areas = Object.keys(AREAS).filter(
  (a) => existsSync(join(here, a, 'run.mjs')) && (!wanted || wanted.includes(a)),
);
for (const a of wanted ?? []) if (!areas.includes(a)) console.error(`bench: no area ${a} (skipped)`);

/** The child running now, so Ctrl-C can stop it (it runs in its own process group). */
let current;
process.on('SIGINT', () => {
  try {
    if (current?.pid) process.kill(-current.pid, 'SIGINT');
  } catch {}
  process.exitCode = 130;
});

/**
 * Runs one bench to its end, its output passed through; resolves with its results JSON.
 * Rejects (the reason to print) when it fails, times out or leaves no readable results.
 */
function runArea(area, out) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, area, 'run.mjs')], {
      env: { ...process.env, BENCH_QUICK: QUICK ? '1' : '0', BENCH_OUT: out },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    current = child;
    let tail = '';
    child.stdout.on('data', (c) => process.stdout.write(c));
    child.stderr.on('data', (c) => {
      process.stderr.write(c);
      tail = (tail + c).slice(-4000);
    });
    let timedOut = false;
    /** @type {NodeJS.Timeout | undefined} */
    let killTimer;
    /** Signals the bench's whole process group: it and the servers, databases and workers it started. */
    const signalGroup = (sig) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {}
    };
    const timer = setTimeout(() => {
      timedOut = true;
      // SIGINT first: the graphql bench stops its servers and database on it.
      signalGroup('SIGINT');
      killTimer = setTimeout(() => signalGroup('SIGKILL'), 20_000);
    }, TIMEOUT_MIN * 60_000);
    child.on('error', (err) => reject(err));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      current = undefined;
      if (timedOut) return reject(new Error(`timed out after ${TIMEOUT_MIN} min`));
      if (code !== 0) {
        const last = tail
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean)
          .pop();
        return reject(
          new Error(`${signal ? `killed by ${signal}` : `exit status ${code}`}${last ? `: ${last}` : ''}`),
        );
      }
      try {
        resolve(JSON.parse(readFileSync(out, 'utf8')));
      } catch (err) {
        reject(new Error(`no results at ${out}: ${err.message}`));
      }
    });
  });
}

mkdirSync(resultsDir, { recursive: true });
const lines = [];
let failed = 0;
for (const area of areas) {
  if (process.exitCode === 130) break;
  console.log(`\n=== bench ${area} (${QUICK ? 'quick' : 'full'}) ===`);
  const out = join(resultsDir, `${area}-${stamp}.json`);
  try {
    const results = await runArea(area, out);
    lines.push(`${area}: ${AREAS[area](results)}`);
  } catch (err) {
    failed++;
    const reason = String(err.message ?? err)
      .replace(/\s+/g, ' ')
      .slice(0, 300);
    lines.push(`${area}: failed (${reason})`);
  }
}
console.log('');
for (const line of lines) console.log(line);
if (failed && process.exitCode !== 130) process.exitCode = 1;
