// Small shared helpers.
import { readdirSync, readFileSync } from 'node:fs';

const t0 = performance.now();

export function log(...args) {
  process.stderr.write(`[bench ${((performance.now() - t0) / 1000).toFixed(1)}s] ${args.join(' ')}\n`);
}

/** The TCP port a listening node:net/http server is bound to. */
export function boundPort(server) {
  const a = server.address();
  if (a === null || typeof a === 'string') throw new Error('server is not listening on TCP');
  return a.port;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Peak and current resident set size of a process, in MB (Linux /proc). */
export function memoryOf(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? NaN);
    return { rssMB: kb('VmRSS') / 1024, hwmMB: kb('VmHWM') / 1024 };
  } catch {
    return { rssMB: NaN, hwmMB: NaN };
  }
}

export function median(xs) {
  const a = xs.filter((x) => Number.isFinite(x)).sort((p, q) => p - q);
  if (a.length === 0) return NaN;
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
}

/** Deep equality of JSON values (object key order ignored). */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  const ka = Object.keys(a),
    kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

/** CPU time (user + system) of a process, in ms; NaN when unreadable. Linux clock ticks are 10 ms. */
export function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // utime, stime
  } catch {
    return NaN;
  }
}

/** CPU ms of a PostgreSQL postmaster and all its children (backends), by pid. */
export function pgCpuByPid(postmasterPid) {
  const out = new Map([[postmasterPid, cpuMsOf(postmasterPid)]]);
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[1]) === postmasterPid) out.set(Number(d), (Number(f[11]) + Number(f[12])) * 10);
    } catch {}
  }
  return out;
}

/** CPU ms PostgreSQL spent between two pgCpuByPid snapshots (processes that appeared count whole). */
export function pgCpuDelta(before, after) {
  let ms = 0;
  for (const [pid, t] of after) ms += t - (before.get(pid) ?? 0);
  return ms;
}

/** Path and values of the first difference between two JSON values (for check messages). */
export function firstDiff(a, b, path = '$') {
  if (jsonEqual(a, b)) return null;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    if (Array.isArray(a) && a.length !== b.length) return `${path}: length ${a.length} vs ${b.length}`;
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDiff(a[k], b[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return `${path}: ${JSON.stringify(a)?.slice(0, 200)} vs ${JSON.stringify(b)?.slice(0, 200)}`;
}
