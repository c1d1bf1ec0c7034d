// Micro-measurement: N variable sets of one document answered by resolveBatchWithPoolText (one
// message, one lateral statement per 500 sets) against N resolveWithPoolText calls (one message
// each), on one connection, the answers checked equal. Reports the PostgreSQL backend's CPU
// (/proc/<pid>/schedstat), this process's CPU and wall time per round (medians), as ratios.
// Usage (after `npm run build`):
//   node benchmarks/graphql/live-batch.mjs [sets=500] [rounds=10]
// DATABASE_URL names a superuser URL of a server whose cluster roles exist (default: the local
// PostgreSQL on 127.0.0.1:5432); a scratch database is created and dropped.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { dist } from './paths.mjs';
import { median } from './util.mjs';

/** CPU time of a process in ms, from /proc/<pid>/schedstat (nanoseconds on CPU; no 10 ms ticks). */
function cpuMsOf(pid) {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

const SETS = Number(process.argv[2] ?? 500);
const ROUNDS = Number(process.argv[3] ?? 10);
const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const engine = await import(dist('graphql/engine.js'));
const { bootstrapProjectDatabase } = await import(dist('db/bootstrap.js'));

const name = `live_batch_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
await admin.query(`create database ${name}`);
const url = new URL(serverUrl);
url.pathname = `/${name}`;
const setup = new pg.Client({ connectionString: url.toString() });
await setup.connect();
let pool;
try {
  await bootstrapProjectDatabase(setup);
  await engine.installSchema(setup);
  await setup.query(`
    comment on schema public is '@graphql({"inflect_names": true})';
    create table item (id serial primary key, name text not null, owner text not null, score int);
    insert into item (name, owner, score) select 'item' || n, 'u' || (n % 1000), n % 97 from generate_series(1, 20000) n;
    create index on item (owner);
    alter table item enable row level security;
    create policy readable on item for select to authenticated using (score <> 13 or owner = current_setting('request.jwt.claims', true)::jsonb ->> 'sub');
    grant select on item to authenticated;
    analyze item;
  `);
  pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
  const principal = { role: 'authenticated', claims: { role: 'authenticated', sub: 'u7' } };
  const c = await pool.connect();
  const backend = (await c.query('select pg_backend_pid() as pid')).rows[0].pid;
  c.release();

  const documents = {
    byPk: {
      query: 'query Q($id: Int!) { itemByPk(id: $id) { id name owner score } }',
      vars: (k) => ({ id: k * 37 + 1 }),
    },
    filtered: {
      query:
        'query Q($o: String!) { itemCollection(filter: {owner: {eq: $o}}, first: 5, orderBy: [{id: AscNullsLast}]) { edges { node { id name score } } } }',
      vars: (k) => ({ o: `u${k}` }),
    },
  };
  for (const [label, doc] of Object.entries(documents)) {
    const reqs = Array.from({ length: SETS }, (_, k) => ({ query: doc.query, variables: doc.vars(k) }));
    const single = async () => {
      const out = [];
      for (const r of reqs) out.push(await engine.resolveWithPoolText(pool, principal, r));
      return out;
    };
    const batch = () => engine.resolveBatchWithPoolText(pool, principal, reqs);
    // Warm both (catalog, plans, prepared statements) and check the answers are the same.
    const [a, b] = [await single(), await batch()];
    await single();
    await batch();
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${label}: batch answers differ`);
    const rows = { single: [], batch: [] };
    for (let r = 0; r < ROUNDS; r++) {
      /** @type {[string, () => Promise<unknown>][]} */
      const runs = [
        ['single', single],
        ['batch', batch],
      ];
      for (const [kind, run] of runs) {
        const pg0 = cpuMsOf(backend);
        const me0 = process.cpuUsage();
        const t0 = performance.now();
        await run();
        const wall = performance.now() - t0;
        const me = process.cpuUsage(me0);
        rows[kind].push({ pg: cpuMsOf(backend) - pg0, node: (me.user + me.system) / 1000, wall });
      }
    }
    const m = (kind, key) => median(rows[kind].map((x) => x[key]));
    const line = (key) =>
      `${key.padEnd(5)} single ${m('single', key).toFixed(1).padStart(7)} ms   batch ${m('batch', key).toFixed(1).padStart(6)} ms   ratio ${(m('single', key) / m('batch', key)).toFixed(1)}x`;
    console.log(`${label}: ${SETS} variable sets, median of ${ROUNDS} rounds`);
    for (const key of ['pg', 'node', 'wall']) console.log(`  ${line(key)}`);
  }
} finally {
  await pool?.end();
  await setup.end();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
}
