// npm run bench:graphql — Strata's GraphQL endpoint against PostGraphile 5 and a hand-written floor.
// See benchmarks/README.md for what it measures and the environment knobs.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { AUTHENTICATOR_PASSWORD, dbInfo, resetMutations, startDatabase } from './dataset.mjs';
import { benchTokens, verifyHS256 } from './jwt.mjs';
import { pickLoadTool, runLoad } from './load.mjs';
import {
  newVariablesCost,
  postgraphileSchemaBuild,
  roundTripsPerRequest,
  sqlCost,
  strataSchemaBuild,
  strataWideFirstRequest,
} from './measures.mjs';
import { ensureComparators } from './comparators/install.mjs';
import { distExists } from './paths.mjs';
import { startProxy } from './pgproxy.mjs';
import { floorEntryFromCapture, handwrittenEntry } from './capture.mjs';
import { QUERIES, requestBody, selectQueries, BENCH_ACCOUNT, NESTED_FIRST } from './queries.mjs';
import {
  ALL_ENGINES,
  ENGINES,
  goals,
  headline,
  lastLine,
  printCpuTable,
  printGoals,
  printTable,
  summarize,
  writeJson,
} from './report.mjs';
import { post, startServer } from './servers/spawn.mjs';
import { firstDiff, jsonEqual, log, memoryOf } from './util.mjs';

// `--nodes N`: cluster throughput, N nodes against one (nodes.mjs), instead of the engine comparison.
const nodesFlag = process.argv.indexOf('--nodes');
if (nodesFlag > 0) {
  const { benchNodes } = await import('./nodes.mjs');
  await benchNodes(Number(process.argv[nodesFlag + 1] ?? 2));
  process.exit(0);
}

const env = process.env;
const QUICK = env.BENCH_QUICK === '1';
const cfg = {
  quick: QUICK,
  rounds: Number(env.BENCH_ROUNDS ?? (QUICK ? 1 : 3)),
  seconds: Number(env.BENCH_DURATION ?? (QUICK ? 2 : 10)),
  warmupSeconds: Number(env.BENCH_WARMUP ?? (QUICK ? 1 : 3)),
  connections: (env.BENCH_CONNS ?? '1,8,32').split(',').map(Number),
  engines: (env.BENCH_ENGINES ?? ENGINES.join(',')).split(','),
  queries: selectQueries(env.BENCH_QUERIES).map((q) => q.name),
  poolMax: Number(env.POOL_MAX ?? 10),
  nestedFirst: NESTED_FIRST,
  loadTool: pickLoadTool(),
  strataMode: env.BENCH_STRATA_MODE ?? (distExists('graphql/http/handler.js') ? 'handler' : 'engine'),
  cpuProfile: Boolean(env.BENCH_CPU_PROF) && env.BENCH_CPU_PROF !== '0',
  measureExtras: env.BENCH_EXTRAS !== '0',
  // PostGraphile's build of the 1,000-table schema takes ~20 s here: full runs only by default.
  postgraphileWide: (env.BENCH_PGL_WIDE ?? (QUICK ? '0' : '1')) === '1',
};
const queries = QUERIES.filter((q) => cfg.queries.includes(q.name));
const strataAvailable =
  distExists('graphql/engine.js') && (cfg.strataMode !== 'handler' || distExists('graphql/http/handler.js'));
if (!strataAvailable && cfg.engines.some((e) => e.startsWith('strata'))) {
  log('Strata is not built yet (dist/graphql/engine.js missing): running PostGraphile and the floor only');
  cfg.engines = cfg.engines.filter((e) => !e.startsWith('strata'));
}

if (cfg.engines.includes('postgraphile')) ensureComparators(log);

const work = mkdtempSync(join(tmpdir(), 'strata-bench-run-'));
const cleanups = [];
let stopping = false;
async function cleanup() {
  if (stopping) return;
  stopping = true;
  for (const fn of cleanups.reverse()) await fn().catch((e) => log('cleanup:', e.message));
  if (env.BENCH_KEEP_LOGS !== '1') rmSync(work, { recursive: true, force: true });
}
process.on('SIGINT', () => cleanup().then(() => process.exit(130)));

const sqlCostText = (costs) =>
  Object.entries(costs)
    .map(([k, v]) => {
      const f = (x) => (x ? `${x.planningUs.toFixed(0)}+${x.executionUs.toFixed(0)}` : 'n/a');
      return `${k} ${f(v.strata)} / ${f(v.handwritten)} / ${f(v.handwrittenJson)}`;
    })
    .join(', ');

function uuidOf(s) {
  const h = createHash('md5').update(s).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

async function main() {
  log(`config: ${JSON.stringify({ ...cfg, queries: cfg.queries.join(',') })}`);
  log(`node ${process.version}, ${cpus().length} cpus, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`);
  const db = await startDatabase();
  cleanups.push(() => db.stop());

  const jwtSecret = randomBytes(32).toString('base64url');
  const { anonKey, userToken } = benchTokens(jwtSecret, uuidOf(`account-${BENCH_ACCOUNT}`));
  const headers = { apikey: anonKey, authorization: `Bearer ${userToken}` };
  const claims = verifyHS256(jwtSecret, userToken);
  const principal = { role: claims.role, claims };
  const envFor = (engine, databaseUrl, superuserUrl, extra = {}) => ({
    DATABASE_URL: databaseUrl,
    SUPERUSER_URL: superuserUrl,
    JWT_SECRET: jwtSecret,
    ANON_KEY: anonKey,
    POOL_MAX: String(cfg.poolMax),
    AUTHENTICATOR_PASSWORD,
    ...extra,
  });
  const bodyFor = (engine, q) => requestBody(engine === 'postgraphile' ? 'postgraphile' : 'strata', q);
  const probeBody = (engine) => bodyFor(engine, QUERIES[0]);
  const floorFile = join(work, 'floor-sql.json');

  // ---- 0. Schema build for the 1,000-table schema (first: its rebuilds bump the schema version,
  // which must not happen once the floor holds Strata's captured statements).
  const schemaBuild = {};
  if (cfg.measureExtras) {
    if (strataAvailable) {
      try {
        schemaBuild.strata = await strataSchemaBuild(db.apiUrl, db.superuserUrl, work);
        log(
          `strata buildGraphQLSchema, ${schemaBuild.strata.queryFields} Query fields: first ${schemaBuild.strata.runsMs[0].toFixed(0)} ms, rebuilds ${schemaBuild.strata.runsMs
            .slice(1)
            .map((x) => x.toFixed(0))
            .join(
              ' / ',
            )} ms (catalog query alone ${schemaBuild.strata.catalogSqlMs?.toFixed(0)} ms; module import ${schemaBuild.strata.importMs.toFixed(0)} ms)`,
        );
        const floor = schemaBuild.strata.graphqlJsFloor;
        log(
          `graphql-js floor (the same ${floor.types} types from plain configs, no catalog): first ${floor.runsMs[0].toFixed(0)} ms, rebuilds ${floor.runsMs
            .slice(1)
            .map((x) => x.toFixed(0))
            .join(
              ' / ',
            )} ms; Strata's first build is ${(schemaBuild.strata.runsMs[0] / floor.runsMs[0]).toFixed(2)}× it`,
        );
      } catch (e) {
        schemaBuild.strata = { error: e.message.slice(0, 2000) };
        log('strata schema build failed:', e.message.slice(0, 800));
      }
      try {
        schemaBuild.strataFirstRequest = await strataWideFirstRequest({
          apiUrl: db.apiUrl,
          env: envFor('strata', db.apiUrl, undefined),
          headers,
          logDir: work,
          strataMode: cfg.strataMode,
        });
        log(
          `strata on the wide schema: process start → first answer ${schemaBuild.strataFirstRequest.firstAnswerMs.toFixed(0)} ms (ok=${schemaBuild.strataFirstRequest.ok}), next request ${schemaBuild.strataFirstRequest.secondRequestMs.toFixed(1)} ms`,
        );
      } catch (e) {
        schemaBuild.strataFirstRequest = { error: e.message.slice(0, 2000) };
        log('strata wide first request failed:', e.message.slice(0, 800));
      }
    }
    if (cfg.engines.includes('postgraphile') && cfg.postgraphileWide) {
      try {
        schemaBuild.postgraphileMs = await postgraphileSchemaBuild(db.apiUrl, jwtSecret);
        log(`postgraphile schema build (1,000 tables): ${schemaBuild.postgraphileMs.toFixed(0)} ms`);
      } catch (e) {
        schemaBuild.postgraphileMs = NaN;
        log('postgraphile schema build failed:', e.message.slice(0, 800));
      }
    }
  }

  // ---- 1. Correctness, round trips, SQL capture: every server once, through the counting proxy.
  const proxy = await startProxy(db.port);
  cleanups.push(() => proxy.close());
  const viaProxy = (url) => {
    const u = new URL(url);
    u.port = String(proxy.port);
    return u.toString();
  };
  const proxiedUrl = viaProxy(db.apiUrl);
  const checks = {}; // query -> engine -> { status, canon, message }
  const roundTrips = {}; // engine -> query -> {...}
  const floorEntries = [];
  /** Strata's statements as captured, for the SQL-alone measure (even where the floor runs hand-written SQL). */
  const captured = [];
  const order = ALL_ENGINES.filter((e) => cfg.engines.includes(e));
  const captureFrom = order.find((e) => e.startsWith('strata')); // Strata's SQL for the floor
  for (const engine of order) {
    if (engine === 'floor') {
      // BENCH_FLOOR_SQL=handwritten | handwritten-json: the floor runs queries.mjs's SQL (jsonb, or
      // with json_* builders) instead of Strata's captured statements — an experiment knob.
      const mode = env.BENCH_FLOOR_SQL ?? 'captured';
      if (mode !== 'captured') floorEntries.splice(0, floorEntries.length);
      // Operations without a captured entry (capture failed, or queries.mjs's handwrittenFloor).
      // A hand-written floor follows Strata as the captured one does: where Strata ran its
      // statement as a prepared one, the floor prepares its SQL (once per connection) too.
      for (const q of queries)
        if (!floorEntries.find((e) => e.query === q.strata.query)) {
          const entry = handwrittenEntry(q, mode === 'handwritten-json');
          if (captured.find((e) => e.query === q.strata.query)?.prepared) {
            entry.prepared = { text: entry.sql, args: [] };
            entry.source += ' (prepared)';
          }
          floorEntries.push(entry);
        }
      writeFileSync(floorFile, JSON.stringify(floorEntries, null, 2));
    }
    const s = await startServer({
      engine,
      env: envFor(engine, proxiedUrl, viaProxy(db.superuserUrl), { FLOOR_SQL: floorFile }),
      headers,
      probe: probeBody(engine),
      logDir: work,
      strataMode: cfg.strataMode,
    });
    try {
      roundTrips[engine] = {};
      for (const q of queries) {
        const body = bodyFor(engine, q);
        checks[q.name] ??= {};
        if (body === undefined) {
          checks[q.name][engine] = { status: 'n/a', message: 'no such operation in this engine' };
          continue;
        }
        if (engine === captureFrom) proxy.startRecording();
        await post(s.url, headers, body); // warm: schema load / plan cache
        const res = await post(s.url, headers, body);
        const recorded = engine === captureFrom ? proxy.stopRecording() : [];
        checks[q.name] ??= {};
        const check = checks[q.name];
        if (res.status !== 200 || !res.json || res.json.errors || res.json.data == null) {
          check[engine] = { status: 'error', message: `HTTP ${res.status}: ${res.text.slice(0, 400)}` };
        } else {
          try {
            check[engine] = {
              status: 'ok',
              canon: q.canon(engine === 'postgraphile' ? 'postgraphile' : 'strata', res.json.data),
            };
          } catch (e) {
            check[engine] = {
              status: 'error',
              message: `unexpected shape (${e.message}): ${res.text.slice(0, 400)}`,
            };
          }
        }
        if (engine === captureFrom && check[engine].status === 'ok') {
          const entry = await floorEntryFromCapture({
            q,
            roundTrips: recorded,
            preparingMessages: proxy.preparingMessages(),
            strataJson: res.json,
            apiUrl: db.apiUrl,
            principal,
          });
          if (entry) {
            captured.push(entry);
            if (!q.handwrittenFloor) floorEntries.push(entry);
          } else if (!q.handwrittenFloor)
            log(
              `could not derive the floor SQL for ${q.name} from Strata's messages; the floor uses hand-written SQL`,
            );
          roundTrips[engine][q.name] = {
            recorded: recorded.map((r) =>
              r.kind === 'simple' ? { simple: r.text } : { extended: r.parses.map((p) => p.text) },
            ),
          };
        }
        roundTrips[engine][q.name] = {
          ...roundTrips[engine][q.name],
          ...(await roundTripsPerRequest({ proxy, url: s.url, headers, body })),
        };
      }
    } finally {
      await s.stop();
    }
  }
  await proxy.close();
  await resetMutations(db.superuserUrl);

  // Equal data: PostGraphile (an independent implementation) is the reference.
  let problems = 0;
  log("check (canonical data equal to PostGraphile's):");
  for (const q of queries) {
    const c = checks[q.name];
    const ref = c.postgraphile?.status === 'ok' ? c.postgraphile.canon : c.strata?.canon;
    for (const engine of order) {
      const x = c[engine];
      if (x.status === 'n/a') continue;
      if (x.status === 'ok' && ref !== undefined && !jsonEqual(x.canon, ref)) {
        x.status = 'mismatch';
        x.message = `first difference (got vs want) at ${firstDiff(x.canon, ref)}`;
      }
      const rls = x.status === 'ok' && q.rlsCheck ? q.rlsCheck(x.canon) : null;
      if (rls) {
        x.status = 'rls';
        x.message = rls;
      }
      if (x.status !== 'ok') problems++;
    }
    log(
      `  ${q.name.padEnd(13)} ${order.map((e) => `${e}=${c[e].status}`).join(' ')}${q.name === 'nested' ? ` (first: ${NESTED_FIRST})` : ''}`,
    );
    for (const e of order) if (c[e].status !== 'ok') log(`      ${e}: ${c[e].message}`);
  }
  log('round trips to PostgreSQL per request (Query + Sync messages):');
  for (const e of order)
    log(
      `  ${e.padEnd(12)} ${queries.map((q) => `${q.name}=${roundTrips[e][q.name]?.perRequest ?? 'n/a'}`).join(' ')}`,
    );
  log(
    `floor SQL: ${floorEntries.map((e) => `${queries.find((q) => q.strata.query === e.query)?.name}=${e.source}`).join(' ')}`,
  );

  // Database-only cost of Strata's SQL vs the hand-written SQL (same 1-round-trip shape, 1 client).
  let sqlCosts = {};
  if (cfg.measureExtras) {
    sqlCosts = await sqlCost({ apiUrl: db.apiUrl, principal, queries, floorEntries: captured });
    log(`SQL alone (PostgreSQL planning + execution µs, medians): ${sqlCostText(sqlCosts)}`);
  }

  // ---- 2. Bench servers (direct connections), cold start, memory at rest.
  const servers = {};
  /** @type {string[]} */
  const profiled = cfg.cpuProfile
    ? env.BENCH_CPU_PROF === '1'
      ? ['strata']
      : (env.BENCH_CPU_PROF ?? '').split(',')
    : [];
  for (const engine of order) {
    /** @type {string[]} */
    const nodeArgs = profiled.includes(engine)
      ? ['--cpu-prof', `--cpu-prof-dir=${join(work, 'profiles')}`, `--cpu-prof-name=${engine}.cpuprofile`]
      : [];
    servers[engine] = await startServer({
      engine,
      env: envFor(engine, db.apiUrl, db.superuserUrl, { FLOOR_SQL: floorFile }),
      headers,
      probe: probeBody(engine),
      logDir: work,
      strataMode: cfg.strataMode,
      nodeArgs,
    });
    cleanups.push(() => servers[engine].stop());
  }
  const coldStart = Object.fromEntries(order.map((e) => [e, servers[e].coldStartMs]));
  const idleMemory = Object.fromEntries(order.map((e) => [e, memoryOf(servers[e].pid)]));

  // ---- 3. Cost of new variable values (plan / compile caches).
  const newVariables = {};
  if (cfg.measureExtras) {
    const byKey = QUERIES.find((q) => q.name === 'byKey');
    if (!byKey?.postgraphile) throw new Error('the byKey query is missing');
    for (const engine of order.filter((e) => e !== 'floor')) {
      newVariables[engine] = await newVariablesCost({
        url: servers[engine].url,
        headers,
        doc: engine === 'postgraphile' ? byKey.postgraphile.query : byKey.strata.query,
        n: QUICK ? 60 : 150,
      });
    }
    log(
      `new variable values (byKey, sequential, median latency): ${Object.entries(newVariables)
        .map(
          ([e, v]) =>
            `${e} ${v.sameVariablesUs.toFixed(0)} µs same / ${v.newVariablesUs.toFixed(0)} µs new (+${v.extraUs.toFixed(0)})`,
        )
        .join(', ')}`,
    );
  }

  // ---- 4. Load: rounds × queries × connections × engines (engine order rotates every round).
  const cells = [];
  const warmed = new Set();
  for (let round = 0; round < cfg.rounds; round++) {
    for (const q of queries) {
      for (const connections of cfg.connections) {
        const rot = order.map((_, i) => order[(i + round + connections) % order.length]);
        for (const engine of rot) {
          if (['error', 'n/a'].includes(checks[q.name][engine].status)) continue;
          const s = servers[engine];
          const body = bodyFor(engine, q);
          let r;
          try {
            if (!warmed.has(`${engine}/${q.name}`)) {
              warmed.add(`${engine}/${q.name}`);
              await runLoad({
                tool: cfg.loadTool,
                url: s.url,
                headers,
                body,
                connections: 8,
                seconds: cfg.warmupSeconds,
                pid: s.pid,
                tmpDir: work,
              });
            }
            r = await runLoad({
              tool: cfg.loadTool,
              url: s.url,
              headers,
              body,
              connections,
              seconds: cfg.seconds,
              pid: s.pid,
              pgPid: db.postmasterPid,
              tmpDir: work,
            });
          } catch (e) {
            // One failed cell (load tool or server trouble) must not lose the whole run.
            log(
              `r${round + 1} ${q.name} c=${connections} ${engine}: load failed: ${e.message.slice(0, 500)}`,
            );
            continue;
          }
          cells.push({ round, query: q.name, connections, engine, ...r });
          log(
            `r${round + 1} ${q.name.padEnd(13)} c=${String(connections).padEnd(2)} ${engine.padEnd(12)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  rss ${r.rssPeakMB.toFixed(0)} MB  cpu/req ${r.cpuUsPerReq.toFixed(0)} µs + pg ${r.pgCpuUsPerReq.toFixed(0)} µs${r.errors + r.non2xx ? `  FAILED ${r.errors + r.non2xx}` : ''}`,
          );
          if (q.mutation) await resetMutations(db.superuserUrl);
        }
      }
    }
  }
  const finalMemory = Object.fromEntries(order.map((e) => [e, memoryOf(servers[e].pid)]));

  // ---- 5. Report.
  const summary = summarize(cells);
  const extra = { schemaBuild };
  console.log('');
  console.log(
    `GraphQL benchmark — ${cfg.quick ? 'QUICK (one short round: smoke check, not a measurement)' : `${cfg.rounds} rounds × ${cfg.seconds} s`}; load: ${cfg.loadTool}; node ${process.version}; strata mode: ${strataAvailable ? cfg.strataMode : 'not built'}`,
  );
  printTable(summary, order);
  console.log('');
  printCpuTable(summary, order);
  console.log('');
  console.log(
    `Cold start, process start → first answer (ms): ${order.map((e) => `${e} ${coldStart[e].toFixed(0)}`).join(', ')}`,
  );
  console.log(
    `RSS at rest / peak (VmHWM) MB: ${order.map((e) => `${e} ${idleMemory[e].rssMB.toFixed(0)} / ${finalMemory[e].hwmMB.toFixed(0)}`).join(', ')}`,
  );
  console.log(
    `Round trips to PostgreSQL per request: ${order.map((e) => `${e} ${[...new Set(queries.map((q) => roundTrips[e][q.name]?.perRequest).filter((x) => x !== undefined))].join('/')}`).join(', ')}`,
  );
  if (schemaBuild.strata?.runsMs)
    console.log(
      `Schema build, 1,000 tables: strata buildGraphQLSchema first ${schemaBuild.strata.runsMs[0].toFixed(0)} ms, after a schema change ${schemaBuild.strata.runsMs
        .slice(1)
        .map((x) => x.toFixed(0))
        .join(
          ' / ',
        )} ms, of which the catalog query ~${schemaBuild.strata.catalogSqlMs?.toFixed(0)} ms${Number.isFinite(schemaBuild.postgraphileMs) ? `; postgraphile ${schemaBuild.postgraphileMs.toFixed(0)} ms` : ''}`,
    );
  else if (Number.isFinite(schemaBuild.postgraphileMs))
    console.log(
      `Schema build, 1,000 tables: postgraphile ${schemaBuild.postgraphileMs.toFixed(0)} ms; strata n/a`,
    );
  if (schemaBuild.strataFirstRequest?.firstAnswerMs)
    console.log(
      `Strata on the 1,000-table schema: process start → first answer ${schemaBuild.strataFirstRequest.firstAnswerMs.toFixed(0)} ms`,
    );
  if (Object.keys(newVariables).length)
    console.log(
      `New variable values (byKey, sequential, median latency): ${Object.entries(newVariables)
        .map(
          ([e, v]) =>
            `${e} ${v.sameVariablesUs.toFixed(0)} µs with the same values / ${v.newVariablesUs.toFixed(0)} µs with new ones`,
        )
        .join(', ')}`,
    );
  if (Object.keys(sqlCosts).length)
    console.log(
      `SQL alone, PostgreSQL planning + execution µs (EXPLAIN ANALYZE medians), Strata's statement / hand-written (jsonb) / hand-written with json_*: ${sqlCostText(sqlCosts)}`,
    );
  const goalList = goals(summary, extra);
  printGoals(goalList);
  const results = {
    when: new Date().toISOString(),
    config: cfg,
    machine: {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      memGiB: totalmem() / 2 ** 30,
    },
    database: await dbInfo(db.superuserUrl),
    checks: Object.fromEntries(
      Object.entries(checks).map(([q, c]) => [
        q,
        Object.fromEntries(Object.entries(c).map(([e, x]) => [e, { status: x.status, message: x.message }])),
      ]),
    ),
    roundTrips,
    floorSql: floorEntries,
    coldStartMs: coldStart,
    memoryMB: { idle: idleMemory, final: finalMemory },
    schemaBuild,
    sqlCosts,
    newVariables,
    cells,
    summary,
    // What `npm run bench` reads (benchmarks/run-all.mjs).
    headline: headline(summary),
    goals: goalList,
  };
  const file = writeJson(results);
  if (cfg.cpuProfile) console.log(`CPU profile(s): ${join(work, 'profiles')} (kept)`);
  console.log(
    `Results: ${file}${problems ? `\nWARNING: ${problems} engine/query checks did not pass (see the check lines above and "checks" in the JSON)` : ''}`,
  );
  // npm prints its own error lines after a failing script, which would push the verdict off the
  // last line: failed checks only change the exit status with BENCH_STRICT=1.
  if (problems && env.BENCH_STRICT === '1') process.exitCode = 1;
  if (cfg.cpuProfile) env.BENCH_KEEP_LOGS = '1';
  await cleanup();
  console.log(lastLine(summary));
}

main().catch(async (e) => {
  log('failed:', e.stack ?? e);
  env.BENCH_KEEP_LOGS = '1';
  await cleanup();
  process.exit(1);
});
