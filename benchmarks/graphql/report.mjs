// Summaries (median over rounds), the printed table, the goals check, the headline numbers, the
// JSON file, and the final one-line verdict for the nested query at 8 connections.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { resultsDir } from './paths.mjs';
import { median } from './util.mjs';

export const ENGINES = ['strata', 'postgraphile', 'floor'];
/** With the optional 'strata-engine' (the engine without the HTTP layer, BENCH_ENGINES=...,strata-engine). */
export const ALL_ENGINES = ['strata', 'strata-engine', 'postgraphile', 'floor'];

export function summarize(cells) {
  const summary = {};
  for (const cell of cells) {
    summary[cell.query] ??= {};
    const q = summary[cell.query];
    q[cell.connections] ??= {};
    const c = q[cell.connections];
    c[cell.engine] ??= [];
    c[cell.engine].push(cell);
  }
  for (const q of Object.values(summary)) {
    for (const [conns, byEngine] of Object.entries(q)) {
      const row = {};
      for (const [engine, list] of Object.entries(byEngine)) {
        const rps = list.map((x) => x.rps);
        row[engine] = {
          rps: median(rps),
          rpsMin: Math.min(...rps),
          rpsMax: Math.max(...rps),
          p50: median(list.map((x) => x.p50)),
          p99: median(list.map((x) => x.p99)),
          rssPeakMB: Math.max(...list.map((x) => x.rssPeakMB)),
          cpuUsPerReq: median(list.map((x) => x.cpuUsPerReq)),
          pgCpuUsPerReq: median(list.map((x) => x.pgCpuUsPerReq)),
          rounds: list.length,
          failedRequests: list.reduce((n, x) => n + x.errors + x.non2xx, 0),
        };
      }
      const s = row.strata,
        p = row.postgraphile,
        f = row.floor;
      row.ratios = {
        strataOverPostgraphile: s && p ? s.rps / p.rps : NaN,
        strataOverFloor: s && f ? s.rps / f.rps : NaN,
        strataP99OverFloorP99: s && f ? s.p99 / f.p99 : NaN,
        strataEngineOverFloor: row['strata-engine'] && f ? row['strata-engine'].rps / f.rps : NaN,
      };
      q[conns] = row;
    }
  }
  return summary;
}

const fx = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const pad = (s, n) => String(s).padStart(n);

export function printTable(summary, engines = ENGINES, print = console.log) {
  const ENGINES = engines;
  const head = [
    'query',
    'c',
    ...ENGINES.flatMap((e) => [
      `${e === 'strata-engine' ? 'engine' : e.slice(0, 8)} req/s`,
      'p50',
      'p99',
      'RSS',
    ]),
    's/pg',
    's/floor',
  ];
  const widths = [13, 3, ...ENGINES.flatMap(() => [14, 6, 6, 5]), 6, 7];
  print(head.map((h, i) => pad(h, widths[i])).join(' '));
  for (const [query, byConns] of Object.entries(summary)) {
    for (const [conns, row] of Object.entries(byConns)) {
      const cols = [query, conns];
      for (const e of ENGINES) {
        const r = row[e];
        cols.push(
          r ? `${fx(r.rps)}${r.failedRequests ? '!' : ''}` : '-',
          r ? fx(r.p50, 1) : '-',
          r ? fx(r.p99, 1) : '-',
          r ? fx(r.rssPeakMB) : '-',
        );
      }
      cols.push(fx(row.ratios.strataOverPostgraphile, 2), fx(row.ratios.strataOverFloor, 2));
      print(cols.map((c, i) => pad(c, widths[i])).join(' '));
    }
  }
  print(
    '(req/s: median over rounds; p50/p99 in ms: median over rounds; RSS: peak MB of the server process during the cells; "!" = failed requests)',
  );
}

/** CPU time per request: the server process, and PostgreSQL (all backends), in µs. */
export function printCpuTable(summary, engines = ENGINES, print = console.log) {
  const ENGINES = engines;
  print('CPU per request, µs (server process + PostgreSQL), median over rounds:');
  print(
    ['query', 'c', ...ENGINES.map((e) => e.padStart(14))]
      .map((h, i) => pad(h, i === 0 ? 13 : i === 1 ? 3 : 15))
      .join(' '),
  );
  for (const [query, byConns] of Object.entries(summary)) {
    for (const [conns, row] of Object.entries(byConns)) {
      const cols = ENGINES.map((e) =>
        row[e] ? `${fx(row[e].cpuUsPerReq)} + ${fx(row[e].pgCpuUsPerReq)}` : '-',
      );
      print([pad(query, 13), pad(conns, 3), ...cols.map((c) => pad(c, 15))].join(' '));
    }
  }
}

/** The targets of the performance issue (goals() and headline()). */
export const GOALS = {
  cellStrataOverFloor: 0.95,
  nestedC8StrataOverPostgraphile: 3,
  cellP99OverFloor: 1.1,
  peakRssMB: 150,
  schemaBuildOverGraphqlJs: 1.3,
};

/** The worst cell of a ratio over every query and connection count: { value, query, connections }. */
function worstCell(summary, ratio, worse) {
  let worst;
  for (const [query, byConns] of Object.entries(summary))
    for (const [conns, row] of Object.entries(byConns)) {
      const value = row.ratios[ratio];
      if (Number.isFinite(value) && (worst === undefined || worse(value, worst.value)))
        worst = { value, query, connections: Number(conns) };
    }
  return worst;
}

/**
 * What `npm run bench` prints for GraphQL (benchmarks/run-all.mjs): the worst Strata/floor req/s
 * ratio over all cells, and nested c=8 Strata/PostGraphile. Null where the run has no such cell.
 */
export function headline(summary) {
  const nested = summary.nested?.[8]?.ratios?.strataOverPostgraphile;
  return {
    worstStrataOverFloor: worstCell(summary, 'strataOverFloor', (a, b) => a < b) ?? null,
    worstP99OverFloor: worstCell(summary, 'strataP99OverFloorP99', (a, b) => a > b) ?? null,
    nestedC8StrataOverPostgraphile: Number.isFinite(nested) ? nested : null,
    goals: GOALS,
  };
}

/** The goals of the performance issue, evaluated on this run's numbers. */
export function goals(summary, extra) {
  const n8 = summary.nested?.[8] ?? {};
  const head = headline(summary);
  const strataPeak = Math.max(
    ...Object.values(summary).flatMap((q) => Object.values(q).map((r) => r.strata?.rssPeakMB ?? -Infinity)),
  );
  const build = extra.schemaBuild?.strata?.runsMs?.[0];
  const floorBuild = extra.schemaBuild?.strata?.graphqlJsFloor?.runsMs?.[0];
  const cell = (w) => (w ? ` (worst: ${w.query} c=${w.connections})` : '');
  const mk = (name, value, target, ok) => ({
    name,
    value,
    target,
    met: Number.isFinite(value) ? ok(value) : null,
  });
  return [
    mk(
      `every cell req/s, strata/floor${cell(head.worstStrataOverFloor)}`,
      head.worstStrataOverFloor?.value,
      `>= ${GOALS.cellStrataOverFloor.toFixed(2)}`,
      (v) => v >= GOALS.cellStrataOverFloor,
    ),
    mk(
      'nested c=8 req/s, strata/postgraphile',
      n8.ratios?.strataOverPostgraphile,
      `>= ${GOALS.nestedC8StrataOverPostgraphile.toFixed(2)}`,
      (v) => v >= GOALS.nestedC8StrataOverPostgraphile,
    ),
    mk(
      `every cell p99, strata/floor${cell(head.worstP99OverFloor)}`,
      head.worstP99OverFloor?.value,
      `<= ${GOALS.cellP99OverFloor.toFixed(2)}`,
      (v) => v <= GOALS.cellP99OverFloor,
    ),
    mk('strata peak RSS under load (MB)', strataPeak, `< ${GOALS.peakRssMB}`, (v) => v < GOALS.peakRssMB),
    // The same types built by graphql-js alone from plain configs, in a fresh process (schema-floor.mjs).
    mk(
      '1,000-table schema build, strata/graphql-js floor',
      build / floorBuild,
      `<= ${GOALS.schemaBuildOverGraphqlJs.toFixed(2)}`,
      (v) => v <= GOALS.schemaBuildOverGraphqlJs,
    ),
  ];
}

export function printGoals(list, print = console.log) {
  print('Goals:');
  for (const g of list) {
    const v = Number.isFinite(g.value)
      ? Math.abs(g.value) < 10
        ? g.value.toFixed(2)
        : g.value.toFixed(0)
      : 'n/a';
    print(
      `  ${g.met === null ? '[ n/a ]' : g.met ? '[ met ]' : '[ MISS ]'} ${g.name}: ${v} (target ${g.target})`,
    );
  }
}

export function writeJson(results) {
  mkdirSync(resultsDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  // BENCH_OUT: where `npm run bench` (benchmarks/run-all.mjs) reads it.
  const file = process.env.BENCH_OUT ?? join(resultsDir, `graphql-${stamp}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  return file;
}

export function lastLine(summary) {
  const r = summary.nested?.[8]?.ratios ?? {};
  return `nested c=8: strata/postgraphile ${fx(r.strataOverPostgraphile, 2)}, strata/floor ${fx(r.strataOverFloor, 2)}`;
}
