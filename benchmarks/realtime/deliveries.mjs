// Change-to-client latency, the same way for live queries (subscribers.mjs) and for the naive
// poller (poller.mjs).
//
// Every write carries its sequence number in the message body (`w<seq> …`, writer.mjs), and the
// writer commits one write at a time, each after the previous one's commit: a result showing seq M
// is a snapshot that holds every write up to M. So, per live query, the client keeps each time the
// highest seq its results show goes up (an "event": seq, receive time). Afterwards, for each write
// of the measured window that this live query's result must reflect (workload.mjs: expects), its
// latency is the first event with seq >= the write's minus the time the writer saw the write commit.
// A later write may hide an earlier one (a newer latest message): the result then still reflects
// it, and the first event at or after the later write delivers both. A write not delivered by the
// end of the drain counts as missed, with its latency at least (end − commit): it enters the
// percentiles with that lower bound, and a percentile at or above the smallest such bound is itself
// only a lower bound (`*_lower_bound`).
import { expects, userOrg } from './workload.mjs';

export class Tracker {
  /** @param {{ user: number, doc: string, vars: object }[]} plan this process's live queries */
  constructor(plan) {
    this.plan = plan;
    this.maxSeen = new Float64Array(plan.length).fill(-1);
    /** Per live query: [seq, t, seq, t, …] as the highest seq went up. */
    /** @type {number[][]} */
    this.events = plan.map(() => []);
    this.results = 0;
    this.foreign = 0;
    this.errors = 0;
    this.firstError = undefined;
    this.lastEventAt = 0;
  }

  /** A result for live query `i` at time `t` (its stamps: workload.mjs stampsOf*). */
  record(i, stamps, t) {
    this.results++;
    this.foreign += stamps.foreign;
    if (stamps.max > this.maxSeen[i]) {
      this.maxSeen[i] = stamps.max;
      this.events[i].push(stamps.max, t);
      this.lastEventAt = t;
    }
  }

  error(message) {
    this.errors++;
    this.firstError ??= String(message).slice(0, 300);
  }

  /**
   * Latencies (ms) of every (live query, write) delivery the window's writes call for, per
   * document; `log`: the writer's entries of the window, in seq order; `end`: when the drain ended
   * (an undelivered write's latency is at least end − its commit: `censored`).
   */
  latencies(log, end = Date.now()) {
    const byRoom = new Map();
    const byOrg = new Map();
    for (const w of log) {
      if (!byRoom.has(w.room)) byRoom.set(w.room, []);
      byRoom.get(w.room).push(w);
      if (!byOrg.has(w.org)) byOrg.set(w.org, []);
      byOrg.get(w.org).push(w);
    }
    const perDoc = {};
    let missed = 0;
    let expected = 0;
    for (let i = 0; i < this.plan.length; i++) {
      const sub = this.plan[i];
      const pool = 'room' in sub.vars ? byRoom.get(sub.vars.room) : byOrg.get(userOrg(sub.user));
      if (!pool) continue;
      const ev = this.events[i];
      perDoc[sub.doc] ??= { latencies: [], censored: [], expected: 0, missed: 0 };
      const out = perDoc[sub.doc];
      let e = 0;
      for (const w of pool) {
        if (!expects(sub, w)) continue;
        expected++;
        out.expected++;
        while (e < ev.length && ev[e] < w.seq) e += 2;
        if (e >= ev.length) {
          missed++;
          out.missed++;
          out.censored.push(end - w.t);
          continue;
        }
        out.latencies.push(ev[e + 1] - w.t);
      }
    }
    const docs = {};
    for (const [doc, d] of Object.entries(perDoc))
      docs[doc] = {
        latencies: Float64Array.from(d.latencies),
        censored: Float64Array.from(d.censored),
        expected: d.expected,
        missed: d.missed,
      };
    return { docs, expected, missed };
  }

  /** Deliveries the window's writes still wait for (the drain ends when none are left). */
  pending(log) {
    const { missed } = this.latencies(log);
    return missed;
  }

  /** Counters, and this process's CPU ms so far (the clients' share of the machine). */
  summary() {
    const { user, system } = process.cpuUsage();
    return {
      cpuMs: (user + system) / 1000,
      results: this.results,
      foreignRows: this.foreign,
      errors: this.errors,
      firstError: this.firstError,
      lastEventAt: this.lastEventAt,
    };
  }
}

/** Percentile (0..1) of a sorted array (nearest rank). */
export function percentile(sorted, p) {
  if (!sorted.length) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

/** Merges the per-document latencies of several processes: p50/p90/p99/max per document and over all. */
export function mergeLatencies(parts) {
  const docs = {};
  let expected = 0;
  let missed = 0;
  for (const part of parts) {
    expected += part.expected;
    missed += part.missed;
    for (const [doc, d] of Object.entries(part.docs)) {
      docs[doc] ??= { arrays: [], censored: [], expected: 0, missed: 0 };
      const acc = docs[doc];
      acc.arrays.push(d.latencies);
      acc.censored.push(d.censored);
      acc.expected += d.expected;
      acc.missed += d.missed;
    }
  }
  const concat = (arrays) => {
    const all = new Float64Array(arrays.reduce((n, a) => n + a.length, 0));
    let o = 0;
    for (const a of arrays) {
      all.set(a, o);
      o += a.length;
    }
    return all;
  };
  const stats = (arrays, censoredArrays) => {
    const censored = concat(censoredArrays);
    const all = concat([...arrays, censored]).sort();
    let floor = Number.POSITIVE_INFINITY;
    for (const c of censored) if (c < floor) floor = c;
    const r = (x) => Math.round(x * 10) / 10;
    const out = { deliveries: all.length - censored.length };
    for (const [name, p] of [
      ['p50', 0.5],
      ['p90', 0.9],
      ['p99', 0.99],
      ['max', 1],
    ]) {
      const v = percentile(all, p);
      out[`${name}_ms`] = r(v);
      // An undelivered write's latency is only known to be at least its bound.
      if (v >= floor) out[`${name}_lower_bound`] = true;
    }
    return out;
  };
  const perDoc = {};
  for (const [doc, d] of Object.entries(docs))
    perDoc[doc] = { ...stats(d.arrays, d.censored), expected: d.expected, missed: d.missed };
  const all = Object.values(docs);
  const overall = stats(
    all.flatMap((d) => d.arrays),
    all.flatMap((d) => d.censored),
  );
  return { ...overall, expected, missed, perDoc };
}
