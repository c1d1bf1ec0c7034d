// npm run bench:graphql -- --nodes N: GraphQL throughput of N Strata nodes (cluster mode, README
// "Running as a cluster") against one node, on one platform database and one PostgreSQL, in the
// same run. Each node is a `strata start` process; the load (autocannon, closed loop) is split
// evenly over the nodes. Prints req/s and the nodes' CPU µs per request for 1 and N nodes, and the
// throughput ratio (N nodes / 1 node). Knobs: BENCH_DURATION (s, default 10), BENCH_CONNS (total
// connections, default 32), BENCH_ROUNDS (default 3; the median round counts).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startEmbedded } from '../../dist/db/embedded.js';
import { cpuMsOf, log } from './util.mjs';

const root = new URL('../../', import.meta.url).pathname;
const QUERY = '{ itemsCollection(first: 20, orderBy: [{id: AscNullsLast}]) { edges { node { id name } } } }';

async function startNode(name, env, dir) {
  const child = spawn(
    process.execPath,
    [join(root, 'bin', 'strata.js'), 'start', '--data-dir', join(dir, name)],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const t0 = Date.now();
  while (!out.includes('Press Ctrl-C to stop')) {
    if (child.exitCode !== null) throw new Error(`node ${name} exited: ${out}`);
    if (Date.now() - t0 > 120_000) throw new Error(`node ${name} did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = /API URL: (http:\/\/\S+)/.exec(out)?.[1];
  if (!url) throw new Error(`node ${name}: no API URL`);
  return { name, url, child };
}

async function stopNode(node) {
  if (node.child.exitCode !== null) return;
  const exited = new Promise((r) => node.child.once('exit', r));
  node.child.kill('SIGTERM');
  await exited;
}

/** One load round over `nodes`: total req/s, non-2xx + errors, and the nodes' CPU µs per request. */
async function round(nodes, ref, anon, connections, seconds) {
  const per = Math.max(1, Math.floor(connections / nodes.length));
  const cpu0 = nodes.map((n) => cpuMsOf(n.child.pid));
  const results = await Promise.all(
    nodes.map((n) =>
      autocannon({
        url: `${n.url}/project/${ref}/graphql/v1`,
        connections: per,
        duration: seconds,
        method: 'POST',
        headers: { 'content-type': 'application/json', apikey: anon },
        body: JSON.stringify({ query: QUERY }),
      }),
    ),
  );
  const cpuMs = nodes.reduce((s, n, i) => s + (cpuMsOf(n.child.pid) - (cpu0[i] ?? 0)), 0);
  const requests = results.reduce((s, r) => s + r.requests.total, 0);
  const failed = results.reduce((s, r) => s + r.non2xx + r.errors + r.timeouts, 0);
  const duration = Math.max(...results.map((r) => r.duration));
  return { rps: requests / duration, failed, cpuUsPerReq: (cpuMs * 1000) / requests };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function benchNodes(count) {
  if (!Number.isInteger(count) || count < 2) throw new Error('--nodes needs a whole number of at least 2');
  const seconds = Number(process.env.BENCH_DURATION ?? 10);
  const connections = Number(process.env.BENCH_CONNS ?? 32);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const dir = mkdtempSync(join(tmpdir(), 'strata-bench-nodes-'));
  const nodes = [];
  const pg = await startEmbedded({ dataDir: join(dir, 'pg'), port: 0, password: 'postgres' });
  try {
    const token = `sbp_${randomBytes(20).toString('hex')}`;
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: pg.superuserUrl('postgres'),
      STRATA_PLATFORM_KEY: randomBytes(32).toString('hex'),
      STRATA_AUTHENTICATOR_PASSWORD: randomBytes(12).toString('hex'),
      STRATA_ACCESS_TOKEN: token,
      STRATA_HOST: '127.0.0.1',
      STRATA_PORT: '0',
      STRATA_POOLER_PORT: 'off',
      STRATA_RATE_LIMIT_MAX: '100000',
    };
    nodes.push(await startNode('n0', env, dir));
    const first = nodes[0];
    const mgmt = async (method, path, body) => {
      const res = await fetch(`${first.url}/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const project = await mgmt('POST', '/projects', {
      name: 'bench',
      organization_id: 'default-org',
      db_pass: 'bench-pass-1',
    });
    const keys = await mgmt('GET', `/projects/${project.id}/api-keys`);
    const anon = keys.find((k) => k.name === 'anon').api_key;
    await mgmt('POST', `/projects/${project.id}/database/query`, {
      query: `create table items (id int primary key, name text not null);
              insert into items select i, 'item ' || i from generate_series(1, 1000) i;
              grant select on items to anon;`,
    });
    for (let i = 1; i < count; i++) nodes.push(await startNode(`n${i}`, env, dir));
    log(
      `bench:graphql --nodes ${count}: ${connections} connections, ${seconds} s per round, ${rounds} rounds`,
    );
    // Warm-up: every node loads the project and builds its schema.
    await round(nodes, project.id, anon, nodes.length * 2, 2);
    const one = [];
    const many = [];
    for (let r = 0; r < rounds; r++) {
      one.push(await round([first], project.id, anon, connections, seconds));
      many.push(await round(nodes, project.id, anon, connections, seconds));
      log(
        `round ${r + 1}: 1 node ${one[r].rps.toFixed(0)} req/s (${one[r].cpuUsPerReq.toFixed(0)} µs CPU/req), ` +
          `${count} nodes ${many[r].rps.toFixed(0)} req/s (${many[r].cpuUsPerReq.toFixed(0)} µs CPU/req)`,
      );
    }
    const failed = [...one, ...many].reduce((s, x) => s + x.failed, 0);
    const rps1 = median(one.map((x) => x.rps));
    const rpsN = median(many.map((x) => x.rps));
    const cpu1 = median(one.map((x) => x.cpuUsPerReq));
    const cpuN = median(many.map((x) => x.cpuUsPerReq));
    console.log(
      `graphql --nodes ${count}: 1 node ${rps1.toFixed(0)} req/s, ${cpu1.toFixed(0)} µs CPU/req; ` +
        `${count} nodes ${rpsN.toFixed(0)} req/s, ${cpuN.toFixed(0)} µs CPU/req; ` +
        `throughput ratio ${(rpsN / rps1).toFixed(2)} (${failed} failed requests)`,
    );
  } finally {
    for (const n of nodes) await stopNode(n).catch(() => {});
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
