// The realtime bench's table, its JSON results (benchmarks/results/realtime-<timestamp>.json, or
// BENCH_OUT) and the one-line summary `npm run bench` prints (`summaryLine`).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const GOALS = {
  live_queries: 10_000,
  changes_per_s: 100,
  p50_ms: 100,
  p99_ms: 1000,
  pg_cpu_strata_over_naive: 0.05,
  server_rss_mib: 300,
};

const here = fileURLToPath(new URL('.', import.meta.url));
const ms = (x) => (Number.isFinite(x) ? (x >= 100 ? String(Math.round(x)) : x.toFixed(1)) : '—');
/** A latency percentile of `l` (p50, p90, p99, max), `≥` when writes still undelivered make it a lower bound. */
const pct = (l, name, fmt = ms) => `${l[`${name}_lower_bound`] ? '≥' : ''}${fmt(l[`${name}_ms`])}`;

export function summaryLine(r) {
  const s = r.strata;
  if (!s) return 'realtime: live-query phase not run (BENCH_RT_PHASES)';
  const n = r.naive;
  const ratio = n ? (s.pg_cpu_ms_per_change / n.pg_cpu_ms_per_change).toFixed(3) : 'n/a';
  // When the poller could not keep up, also the ratio to what polling every query each interval costs.
  const short =
    n && n.polls_per_s < 0.95 * n.polls_per_s_target
      ? `; naive polled ${n.polls_per_s}/s of ${n.polls_per_s_target}/s, at full rate ${(s.pg_cpu_ms_per_change / n.pg_cpu_ms_per_change_at_target).toFixed(3)}`
      : '';
  return (
    `realtime: ${s.subscribed} live queries at ${Math.round(s.change_rate)} changes/s ` +
    `p50 ${pct(s.latency, 'p50', Math.round)} ms p99 ${pct(s.latency, 'p99', Math.round)} ms (goals ${GOALS.p50_ms}/${GOALS.p99_ms}); ` +
    `pg cpu per change strata/naive ${ratio} (goal ${GOALS.pg_cpu_strata_over_naive}${short}); ` +
    `rss ${s.server_rss_mib.peak} MiB (goal ${GOALS.server_rss_mib})`
  );
}

/** The table's rows: a label and what each phase shows. */
/** @type {[string, (p: any, r: any) => string][]} */
const ROWS = [
  [
    'live queries',
    (p, r) =>
      p.ramp_s === undefined ? `${r.workload.live_queries}` : `${p.subscribed} (ramp ${p.ramp_s} s)`,
  ],
  ['changes in window', (p) => `${p.changes} (${p.change_rate}/s)`],
  [
    'change→client p50/p90/p99',
    (p) => `${ms(p.latency.p50_ms)} / ${ms(p.latency.p90_ms)} / ${ms(p.latency.p99_ms)} ms`,
  ],
  ['deliveries (missed)', (p) => `${p.latency.deliveries} (${p.latency.missed})`],
  ['pg cpu per change', (p) => `${p.pg_cpu_ms_per_change} ms`],
  ['server cpu per change', (p) => `${p.server_cpu_ms_per_change} ms`],
  ['cpu cores pg/server/client', (p) => `${p.pg_cpu_cores} / ${p.server_cpu_cores} / ${p.client_cpu_cores}`],
  ['server rss peak/mean', (p) => `${p.server_rss_mib.peak} / ${p.server_rss_mib.mean} MiB`],
  [
    'statements / polls',
    (p) =>
      p.polls_per_s === undefined
        ? `${p.statements_per_change ?? '—'} + ${p.probes_per_change ?? '—'} probes per change (${p.live_stats?.groups ?? '—'} groups)`
        : `${p.polls_per_s}/s of ${p.polls_per_s_target}/s`,
  ],
  ['transactions per change', (p) => `${p.xact_per_change}`],
  ['errors / rows of other orgs', (p) => `${p.errors} / ${p.foreign_rows}`],
];

export function report(r) {
  const s = r.strata;
  const n = r.naive;
  if (s && n) {
    r.pg_cpu_strata_over_naive = +(s.pg_cpu_ms_per_change / n.pg_cpu_ms_per_change).toFixed(4);
    r.pg_cpu_strata_over_naive_at_target = +(
      s.pg_cpu_ms_per_change / n.pg_cpu_ms_per_change_at_target
    ).toFixed(4);
  }
  r.summaryLine = summaryLine(r);
  const w = r.workload;
  console.log(
    `\nRealtime live queries${r.quick ? ' (QUICK: a smoke check, BENCH_QUICK=0 for the full run)' : ''}: ` +
      `${w.live_queries} live queries of ${w.users} users (${w.orgs} orgs, ${w.rooms} rooms, ${w.seeded_messages} seeded messages), ` +
      `${r.options.rate} writes/s (${Math.round(r.options.updateShare * 100)} % updates), ${r.options.seconds} s measured after ${r.options.warmup} s warm-up; ` +
      `server rss idle ${r.server_rss_idle_mib} MiB${s ? `, after the ramp ${s.server_rss_after_ramp_mib} MiB` : ''}`,
  );
  const phases = [
    ['strata (live)', s],
    [`naive (poll ${r.options.pollMs} ms)`, n],
  ].filter(([, p]) => p);
  const rows = [
    ['', ...phases.map(([name]) => name)],
    ...ROWS.map(([label, f]) => [label, ...phases.map(([, p]) => f(p, r))]),
  ];
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  for (const row of rows) console.log(`  ${row.map((x, c) => x.padEnd(widths[c])).join('   ')}`);
  console.log(
    `  per document, p50 / p99 ms (deliveries, missed): ${phases.map(([name]) => name).join(' | ')}`,
  );
  for (const doc of Object.keys((s ?? n).latency.perDoc)) {
    const cells = phases.map(([, p]) => {
      const d = p.latency.perDoc[doc];
      return d ? `${pct(d, 'p50')} / ${pct(d, 'p99')} (${d.deliveries}, ${d.missed})` : '—';
    });
    console.log(`    ${doc.padEnd(10)} ${cells.map((c) => c.padEnd(28)).join(' | ')}`);
  }
  if (n)
    console.log(
      `  naive pg cpu per poll ${n.pg_cpu_ms_per_poll} ms; at the full ${n.polls_per_s_target} polls/s it would be ` +
        `${n.pg_cpu_ms_per_change_at_target} ms per change` +
        (s ? ` (strata/that ${r.pg_cpu_strata_over_naive_at_target})` : ''),
    );
  for (const [name, p] of phases) if (p.first_error) console.log(`  first ${name} error: ${p.first_error}`);
  const file =
    process.env.BENCH_OUT ?? join(here, '..', 'results', `realtime-${r.when.replace(/[:.]/g, '-')}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
  console.log(`\nwrote ${file}`);
  console.log(r.summaryLine);
}
