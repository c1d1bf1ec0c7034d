// The one-off measurements: round trips to PostgreSQL per request (through the counting proxy),
// schema build time for the 1,000-table schema (Strata in-process, PostGraphile for reference),
// and Strata's first request against that schema over HTTP.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { root } from './paths.mjs';
import { post, startServer } from './servers/spawn.mjs';
import { log } from './util.mjs';

/** Sends `n` sequential requests after `warm` unmeasured ones; returns round trips per request. */
export async function roundTripsPerRequest({ proxy, url, headers, body, n = 20, warm = 3 }) {
  for (let i = 0; i < warm; i++) await post(url, headers, body);
  proxy.reset();
  for (let i = 0; i < n; i++) await post(url, headers, body);
  const s = { ...proxy.stats };
  return {
    perRequest: proxy.roundTrips() / n,
    queryMessages: s.query / n,
    syncMessages: s.sync / n,
    parseMessages: s.parse / n,
    newConnections: s.connections,
  };
}

function runChild(file, env, marker) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [file], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    p.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith(marker));
      if (!line)
        return reject(new Error(`${file} (exit ${code}) printed no ${marker}:\n${out.slice(-3000)}`));
      resolve(line.slice(marker.length).trim());
    });
  });
}

/**
 * Strata's build of the wide schema in a fresh process, then its graphql-js floor: the same types,
 * fields and arguments built by graphql-js from plain configs in another fresh process (no catalog
 * query, no reflection rules), the baseline the build is compared with.
 */
export async function strataSchemaBuild(apiUrl, superuserUrl, workDir) {
  const file = fileURLToPath(new URL('./schema-build.mjs', import.meta.url));
  const shape = join(workDir, 'wide-schema-shape.json');
  const out = JSON.parse(
    await runChild(
      file,
      {
        DATABASE_URL: apiUrl,
        SUPERUSER_URL: superuserUrl,
        SCHEMA: 'wide',
        ROLE: 'authenticated',
        SHAPE_OUT: shape,
      },
      'SCHEMA_BUILD',
    ),
  );
  const floor = fileURLToPath(new URL('./schema-floor.mjs', import.meta.url));
  out.graphqlJsFloor = JSON.parse(await runChild(floor, { SHAPE: shape }, 'SCHEMA_FLOOR'));
  return out;
}

export async function postgraphileSchemaBuild(apiUrl, jwtSecret) {
  const file = fileURLToPath(new URL('./servers/postgraphile.mjs', import.meta.url));
  return Number(
    await runChild(
      file,
      { DATABASE_URL: apiUrl, JWT_SECRET: jwtSecret, SCHEMAS: 'wide', MODE: 'schema-build' },
      'SCHEMA_BUILD_MS',
    ),
  );
}

/** Strata started on a connection whose search_path is the wide schema: start → first answer. */
export async function strataWideFirstRequest({ apiUrl, env, headers, logDir, strataMode }) {
  const u = new URL(apiUrl);
  u.searchParams.set('options', '-c search_path=wide');
  const probe = JSON.stringify({ query: '{ t0001Collection(first: 1) { edges { node { id name } } } }' });
  const s = await startServer({
    engine: 'strata',
    env: { ...env, DATABASE_URL: u.toString() },
    headers,
    probe,
    logDir,
    strataMode,
  });
  try {
    const ok =
      s.firstAnswer.status === 200 &&
      s.firstAnswer.json?.data?.t0001Collection != null &&
      !s.firstAnswer.json?.errors;
    const t = performance.now();
    const second = await post(s.url, headers, probe);
    const secondMs = performance.now() - t;
    if (!ok) log(`wide first request answered: ${s.firstAnswer.text.slice(0, 300)}`);
    return {
      firstAnswerMs: s.coldStartMs,
      ok,
      secondRequestMs: secondMs,
      secondOk: second.status === 200 && !second.json?.errors,
    };
  } finally {
    await s.stop();
  }
}

/**
 * Database-only cost of each query's SQL: Strata's captured statement against the hand-written
 * one (queries.mjs), as the benchmark principal: medians of PostgreSQL's own planning and
 * execution times from EXPLAIN (ANALYZE, TIMING OFF) — steadier than wall-clock on a busy machine.
 * Tells SQL cost apart from Node/HTTP cost. Mutations are skipped.
 * Also the hand-written statement built with json_* instead of jsonb_* functions.
 */
export async function sqlCost({ apiUrl, principal, queries, floorEntries, n = 41 }) {
  const pg = (await import('pg')).default;
  const { dist } = await import('./paths.mjs');
  const { rolePrelude } = await import(dist('db/with-role.js'));
  const client = new pg.Client({ connectionString: apiUrl });
  await client.connect();
  const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
  const out = {};
  try {
    const time = async (sql) => {
      const msg = `${rolePrelude(principal)}; explain (analyze, costs off, timing off, summary on) ${sql}; commit`;
      const planning = [],
        execution = [];
      for (let i = 0; i < n + 5; i++) {
        const text = (await client.query(msg))[3].rows.map((r) => r['QUERY PLAN']).join('\n');
        if (i < 5) continue;
        planning.push(1000 * Number(/Planning Time: ([\d.]+)/.exec(text)?.[1]));
        execution.push(1000 * Number(/Execution Time: ([\d.]+)/.exec(text)?.[1]));
      }
      return { planningUs: med(planning), executionUs: med(execution) };
    };
    for (const q of queries) {
      if (q.mutation) continue;
      const captured = floorEntries.find(
        (e) => e.query === q.strata.query && e.source.startsWith('captured'),
      );
      out[q.name] = {
        strata: captured ? await time(captured.sql) : undefined,
        handwritten: await time(q.floorSql),
        // The same hand-written statement with json_* builders instead of jsonb_* (text JSON,
        // keys in selection order): what building jsonb costs PostgreSQL.
        handwrittenJson: await time(q.floorSql.replaceAll('jsonb_', 'json_').replaceAll('::jsonb', '::json')),
      };
    }
  } finally {
    await client.end();
  }
  return out;
}

/**
 * What a new set of variable values costs: sequential requests alternating between the same
 * variables (cached plan / compiled SQL) and never-seen ones (byKey with a fresh id each time).
 * Strata keys its plan cache by document + variables, so fresh values compile anew; PostGraphile
 * caches by document. Returns median latencies in µs and their difference.
 */
export async function newVariablesCost({ url, headers, doc, n = 150 }) {
  const fixed = [],
    fresh = [];
  const body = (id) => JSON.stringify({ query: doc, variables: { id } });
  for (let i = 0; i < 10; i++) await post(url, headers, body(7));
  for (let i = 0; i < n; i++) {
    let t = performance.now();
    await post(url, headers, body(7));
    fixed.push((performance.now() - t) * 1000);
    t = performance.now();
    await post(url, headers, body(20000 + i)); // no such post: same work for the database, new values for the engine
    fresh.push((performance.now() - t) * 1000);
  }
  const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
  return { sameVariablesUs: med(fixed), newVariablesUs: med(fresh), extraUs: med(fresh) - med(fixed) };
}
