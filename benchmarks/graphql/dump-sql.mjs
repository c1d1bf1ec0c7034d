// node benchmarks/graphql/dump-sql.mjs — prints the SQL Strata's engine sends to PostgreSQL for every
// benchmark query (queries.mjs), without HTTP: through resolveWithPool (the server's path: role
// prelude, version guard, prepared statements) and through resolve() on a client. A change inside
// src/graphql that should not change any statement is checked by running this on two builds and
// diffing the outputs: BENCH_DIST=/other/checkout/dist node benchmarks/graphql/dump-sql.mjs.
// Each query runs three times with its own variables (inlined, then prepared, then executed) and
// once with other string/integer values (a plan template filled in). The catalog query is printed
// once, as its length and SHA-256. Env: BENCH_QUERIES (names, comma-separated) as run.mjs.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { startDatabase } from './dataset.mjs';
import { dist } from './paths.mjs';
import { BENCH_ACCOUNT, selectQueries } from './queries.mjs';

const CATALOG = /\nwith recursive\nsearch_path_schemas as \([\s\S]*\) as catalog\n/;

/** Every query text the recorded connections send, in order. */
const sent = [];
/** @param {pg.ClientBase} client */
function record(client) {
  const query = client.query.bind(client);
  client.query = /** @type {any} */ (
    (config, ...rest) => {
      const text = typeof config === 'string' ? config : config?.text;
      if (typeof text === 'string') sent.push(text);
      return query(config, ...rest);
    }
  );
}

const catalogs = new Set();
function take() {
  const out = sent.splice(0).map((text) =>
    text.replace(CATALOG, (m) => {
      catalogs.add(`${m.length} ${createHash('sha256').update(m).digest('hex')}`);
      return '<catalog query>';
    }),
  );
  return out.join('\n---\n');
}

/** The same variables with other values: integers + 1, strings with a suffix. */
function otherValues(variables) {
  const out = {};
  for (const [k, v] of Object.entries(variables ?? {}))
    out[k] = typeof v === 'number' ? v + 1 : typeof v === 'string' ? `${v} (other)` : v;
  return out;
}

const uuid = (s) => {
  const h = createHash('md5').update(s).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};
const claims = { role: 'authenticated', sub: uuid(`account-${BENCH_ACCOUNT}`), aud: 'authenticated' };
const principal = { role: 'authenticated', claims };

const db = await startDatabase({ wide: false });
const lines = [];
try {
  const engine = await import(dist('graphql/engine.js'));
  const queries = selectQueries(process.env.BENCH_QUERIES).filter((q) => q.strata);
  const pool = new pg.Pool({ connectionString: db.apiUrl, max: 1 });
  pool.on('connect', record);
  try {
    for (const q of queries) {
      const { query, variables } = q.strata;
      const runs = [variables, variables, variables, otherValues(variables)];
      for (const [i, vars] of runs.entries()) {
        await engine.resolveWithPool(pool, principal, { query, variables: vars });
        lines.push(`== pool ${q.name} #${i + 1} ${JSON.stringify(vars)}`, take());
      }
    }
  } finally {
    await pool.end();
  }
  const client = new pg.Client({ connectionString: db.apiUrl });
  await client.connect();
  record(client);
  try {
    for (const q of queries) {
      const { query, variables } = q.strata;
      for (const [i, vars] of [variables, otherValues(variables)].entries()) {
        await client.query(
          `begin; set local role authenticated; select set_config('request.jwt.claims', $$${JSON.stringify(claims)}$$, true)`,
        );
        sent.splice(0);
        await engine.resolve(client, { query, variables: vars });
        lines.push(`== client ${q.name} #${i + 1} ${JSON.stringify(vars)}`, take());
        await client.query('rollback');
        sent.splice(0);
      }
    }
  } finally {
    await client.end();
  }
} finally {
  await db.stop();
}
lines.push(`== catalog query (length sha256)`, ...catalogs);
process.stdout.write(`${lines.join('\n')}\n`);
