// Child process: the floor. The least a Node server must do to answer these requests honestly:
// read and parse the JSON body, check the apikey and Bearer JWT (HS256), run the SQL in ONE round
// trip (begin; set local role; set_config('request.jwt.claims', ...); <statement>; commit — the
// same prelude text as Strata's db/with-role.ts), and write PostgreSQL's JSON text out unparsed.
// No GraphQL parsing, validation or planning: each known document maps to a fixed SQL statement
// (FLOOR_SQL file: Strata's own compiled SQL captured through the proxy, else hand-written).
// Env: DATABASE_URL (API login role), JWT_SECRET, FLOOR_SQL (json file), PORT, POOL_MAX (10),
//   BENCH_FLOOR_GUARD=1: also run Strata's schema-version guard statement before the SQL (same
//   statements as Strata, not just the same work);
//   Prepared statements follow Strata: when Strata ran the statement as `execute <name>(<args>)`
//   of a per-connection prepared statement, the floor prepares the same parameterised text once
//   per connection (in the same message) and executes it with the same arguments; otherwise it
//   sends the SQL text. BENCH_FLOOR_PREPARE=0 never prepares; =1 also prepares the other entries
//   (values inlined, so the plan is cached outright: an optimistic floor).
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { principalFromHeaders } from '../jwt.mjs';
import { dist } from '../paths.mjs';
import { boundPort } from '../util.mjs';

const { rolePrelude } = await import(dist('db/with-role.js'));
const entries = JSON.parse(readFileSync(process.env.FLOOR_SQL ?? '', 'utf8'));
const withGuard = process.env.BENCH_FLOOR_GUARD === '1';
const prepareMode = process.env.BENCH_FLOOR_PREPARE; // undefined: follow Strata; '0' never; '1' always
const byQuery = new Map(
  entries.map((e, i) => {
    const prepared =
      prepareMode === '0'
        ? undefined
        : (e.prepared ?? (prepareMode === '1' ? { text: e.sql, args: [] } : undefined));
    const execute = prepared
      ? prepared.args.length
        ? `execute floor_${i}(${prepared.args.join(', ')})`
        : `execute floor_${i}`
      : undefined;
    return [e.query, { ...e, name: `floor_${i}`, prepared, execute, pre: withGuard ? (e.guard ?? []) : [] }];
  }),
);
const preparedOn = new WeakMap(); // pool client -> Set of statement names prepared on it
const secret = process.env.JWT_SECRET;

// JSON stays text: the database already built the response.
for (const oid of [114, 3802]) pg.types.setTypeParser(oid, (v) => v);
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL_MAX ?? 10),
});
pool.on('error', () => {});

async function run(principal, entry) {
  const client = await pool.connect();
  let broken;
  let set = preparedOn.get(client);
  if (!set) {
    set = new Set();
    preparedOn.set(client, set);
  }
  try {
    const pre = entry.pre.length ? entry.pre.join('; ') + '; ' : '';
    const prepare =
      entry.prepared && !set.has(entry.name) ? `prepare ${entry.name} as ${entry.prepared.text}; ` : '';
    const statement = entry.execute ?? entry.sql;
    const results = await client.query(`${prepare}${rolePrelude(principal)}; ${pre}${statement}; commit`);
    if (prepare) set.add(entry.name);
    const r = results[(prepare ? 4 : 3) + entry.pre.length];
    return r.rows.length ? r.rows[0][r.fields[0].name] : null;
  } catch (e) {
    set.clear();
    await client.query('rollback').catch((err) => (broken = err));
    throw e;
  } finally {
    client.release(broken);
  }
}

function send(res, status, text) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (d) => chunks.push(d));
  req.on('end', async () => {
    let principal;
    try {
      principal = principalFromHeaders(secret, req.headers);
    } catch (e) {
      return send(res, 401, JSON.stringify({ message: e.message }));
    }
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const entry = byQuery.get(body.query);
      if (!entry) return send(res, 400, JSON.stringify({ errors: [{ message: 'unknown document' }] }));
      const text = await run(principal, entry);
      send(res, 200, entry.prefix + (text ?? 'null') + entry.suffix);
    } catch (e) {
      send(res, 200, JSON.stringify({ data: null, errors: [{ message: String(e.message ?? e) }] }));
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`READY http://127.0.0.1:${boundPort(server)}/graphql/v1 entries=${entries.length}`);
});
const stop = () => server.close(() => pool.end().then(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
