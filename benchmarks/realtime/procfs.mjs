// CPU time and RSS from /proc (Linux): the Strata server process, and the embedded PostgreSQL
// below it (the postmaster and every backend, walsender and helper process it forked).
import { execSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let tick = 100;
try {
  tick = Number(execSync('getconf CLK_TCK', { encoding: 'utf8' }).trim()) || 100;
} catch {}
const MS_PER_TICK = 1000 / tick;

/** /proc/<pid>/stat's fields we use, or undefined when the process is gone. */
function stat(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  // Fields from the 3rd (state) on: ppid is field 4, utime 14, stime 15, cutime 16, cstime 17.
  const f = text.slice(close + 2).split(' ');
  return {
    comm,
    ppid: Number(f[1]),
    utime: Number(f[11]),
    stime: Number(f[12]),
    cutime: Number(f[13]),
    cstime: Number(f[14]),
  };
}

/** CPU ms (user + system, all threads) of one process so far. */
export function cpuMs(pid) {
  const s = stat(pid);
  return s ? (s.utime + s.stime) * MS_PER_TICK : 0;
}

/** Every process below `pid`, with its stat. */
function descendants(pid) {
  const byParent = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(entry);
    if (!s) continue;
    const list = byParent.get(s.ppid) ?? [];
    list.push({ pid: Number(entry), ...s });
    byParent.set(s.ppid, list);
  }
  const out = [];
  const walk = (p) => {
    for (const c of byParent.get(p) ?? []) {
      out.push(c);
      walk(c.pid);
    }
  };
  walk(pid);
  return out;
}

/**
 * CPU ms of the PostgreSQL server below `serverPid` so far: every live postgres process's own
 * time, plus the postmaster's reaped children (backends that already exited: cutime + cstime).
 */
export function postgresCpuMs(serverPid) {
  let ticks = 0;
  let processes = 0;
  for (const p of descendants(serverPid)) {
    if (p.comm !== 'postgres') continue;
    processes++;
    ticks += p.utime + p.stime;
    if (p.ppid === serverPid) ticks += p.cutime + p.cstime;
  }
  return { ms: ticks * MS_PER_TICK, processes };
}

/** VmRSS of a process in MiB (0 when it is gone). */
export function rssMiB(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples a process's RSS every `ms` until stop(): peak and mean of the samples. */
export function sampleRss(pid, ms = 200) {
  let peak = 0;
  let sum = 0;
  let n = 0;
  const take = () => {
    const r = rssMiB(pid);
    peak = Math.max(peak, r);
    sum += r;
    n++;
  };
  take();
  const timer = setInterval(take, ms);
  return {
    stop() {
      clearInterval(timer);
      take();
      return { peakMiB: peak, meanMiB: sum / n, samples: n };
    },
  };
}
