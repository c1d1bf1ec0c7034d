// A 20,000-alias query against Strata's HTTP handler (in this process): how long until it is
// answered or refused, wall clock and this process's CPU. Run against a database that has the
// bench schema (schema.sql), e.g. the one `npm run bench:graphql` creates, or any DATABASE_URL
// whose search_path has an `accounts` table readable by anon:
//   DATABASE_URL=postgres://authenticator@host/db node benchmarks/graphql/wide-query.mjs [aliases=20000]
// Shapes: `typename` (n × `__typename` at the root), `leaf` (n aliases of one column under one
// collection), `root` (n aliases of a collection at the root). Each is sent with the HTTP layer's
// default selection limit and with none (`STRATA_GRAPHQL_MAX_SELECTIONS=0`: the engine answers).
// Each case runs 3 times after a warm-up with a tenth of the aliases; the median is printed.
// Prints one line per case: WIDE_QUERY {"shape","limit","ms","cpuMs","status","head"}
// (cpuMs: this process's CPU, the client's request building and reading included).
import { createServer } from 'node:http';
import { dist } from './paths.mjs';
import { benchTokens } from './jwt.mjs';
import { boundPort } from './util.mjs';

const n = Number(process.argv[2] ?? 20000);
const REPEAT = 3;
const aliases = (f, count) => Array.from({ length: count }, (_, i) => `a${i}: ${f}`).join(' ');
const shapes = (count) => ({
  typename: `{ ${aliases('__typename', count)} }`,
  leaf: `{ accountsCollection(first: 1) { edges { node { ${aliases('id', count)} } } } }`,
  root: `{ ${aliases('accountsCollection(first: 1) { __typename }', count)} }`,
});
const SHAPES = shapes(n);
// A running server has its parser and planner warm: each shape is sent once at a tenth of the size first.
const WARM = shapes(Math.ceil(n / 10));
const jwtSecret = 'wide-query-bench-secret-wide-query-bench';
const { anonKey } = benchTokens(jwtSecret, '00000000-0000-0000-0000-000000000000');
const { createPool } = await import(dist('db/pool.js'));
const { createGraphQLHandler } = await import(dist('graphql/http/handler.js'));
const pool = createPool(process.env.DATABASE_URL, { max: 2, applicationName: 'strata-wide-query' });
for (const limit of ['default', 'none']) {
  const handler = createGraphQLHandler({
    pool,
    jwtSecret,
    anonKey,
    graphiql: false,
    logging: false,
    maxBodyBytes: 16 * 1024 * 1024,
    ...(limit === 'none' ? { maxSelections: false } : {}),
  });
  const server = createServer(handler);
  await new Promise((r) => server.listen({ port: 0, host: '127.0.0.1' }, () => r(undefined)));
  const url = `http://127.0.0.1:${boundPort(server)}/graphql/v1`;
  const post = (query) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', apikey: anonKey },
      body: JSON.stringify({ query }),
    }).then(async (r) => ({ status: r.status, text: await r.text() }));
  await post('{ accountsCollection(first: 1) { edges { node { id } } } }');
  for (const [shape, query] of Object.entries(SHAPES)) {
    await post(WARM[shape]);
    const runs = [];
    for (let i = 0; i < REPEAT; i++) {
      const cpu = process.cpuUsage();
      const t = performance.now();
      const r = await post(query);
      const ms = performance.now() - t;
      const used = process.cpuUsage(cpu);
      runs.push({ ms, cpuMs: (used.user + used.system) / 1000, r });
    }
    const mid = (k) => runs.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(REPEAT / 2)];
    const { r } = runs[0];
    const line = {
      shape,
      limit,
      ms: Math.round(mid('ms')),
      cpuMs: Math.round(mid('cpuMs')),
      status: r.status,
      head: r.text.slice(0, 100),
    };
    console.log(`WIDE_QUERY ${JSON.stringify(line)}`);
  }
  await new Promise((r) => server.close(r));
}
await pool.end();
