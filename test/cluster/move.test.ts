/**
 * `strata projects move`: a project on the machine's PostgreSQL 15 (127.0.0.1:5432, trust auth, as
 * on CI machines) moves to the cluster's second server while both nodes serve it. pg_dump 15 cannot
 * dump the embedded servers (PostgreSQL 18), so the source is the PostgreSQL 15; without one the
 * test is skipped, saying so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { probeDatabase } from '../../src/platform/db-health.js';
import { withClient, withDatabase } from '../../src/db/pool.js';
import { quoteIdent } from '../../src/db/sql-text.js';
import { type Cluster, type Node, startCluster } from './cluster-support.js';

const PG15 = 'postgresql://postgres@127.0.0.1:5432/postgres';
const root = new URL('../../', import.meta.url).pathname;
const available = await probeDatabase(PG15, 2_000);
if (!available)
  console.warn('move.test: no PostgreSQL at 127.0.0.1:5432; strata projects move is not tested');

let cluster: Cluster;
let a: Node;
let b: Node;
let ref = '';
beforeAll(async () => {
  if (!available) return;
  cluster = await startCluster({ extraServers: [`pg15=${PG15}`] });
  [a, b] = cluster.nodes as [Node, Node];
}, 180_000);
afterAll(async () => {
  await cluster?.close();
  if (!ref) return;
  await withClient(PG15, async (c) => {
    await c.query(`drop database if exists ${quoteIdent(`project_${ref}`)} with (force)`);
    for (const role of [`strata_sql.${ref}`, `postgres.${ref}`])
      await c.query(`drop role if exists ${quoteIdent(role)}`);
  }).catch(() => {});
}, 60_000);

function strata(args: string[]): string {
  return execFileSync(process.execPath, [join(root, 'bin', 'strata.js'), ...args], {
    env: cluster.env,
    encoding: 'utf8',
  });
}

async function call(
  node: Node,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
}

const mgmt = (node: Node, method: string, path: string, body?: unknown) =>
  call(node, method, `/v1${path}`, body, { authorization: `Bearer ${cluster.accessToken}` });

const serverOf = (r: string) =>
  withClient(withDatabase(cluster.primaryUrl, cluster.platformDatabase), async (c) => {
    const { rows } = await c.query<{ db_server: string }>('select db_server from projects where ref = $1', [
      r,
    ]);
    return rows[0]?.db_server;
  });

describe.runIf(available)('strata projects move', () => {
  it('moves a project from PostgreSQL 15 to another server; both nodes follow, data and login intact', async () => {
    strata(['servers', 'drain', 'primary']);
    strata(['servers', 'drain', 'second']);
    const created = await mgmt(a, 'POST', '/projects', {
      name: 'mover',
      organization_id: 'default-org',
      db_pass: 'mover-password-1',
    });
    strata(['servers', 'undrain', 'primary']);
    strata(['servers', 'undrain', 'second']);
    expect(created.status, created.text).toBe(201);
    ref = created.body.id;
    expect(await serverOf(ref)).toBe('pg15');
    const keys = (await mgmt(b, 'GET', `/projects/${ref}/api-keys`)).body as {
      name: string;
      api_key: string;
    }[];
    const service = keys.find((k) => k.name === 'service_role')?.api_key ?? '';
    const sql = (node: Node, query: string) =>
      mgmt(node, 'POST', `/projects/${ref}/database/query`, { query });
    expect(
      (
        await sql(
          a,
          `create table items (id int primary key, name text); insert into items values (1, 'one');`,
        )
      ).status,
    ).toBe(201);
    const read = (node: Node) =>
      call(
        node,
        'POST',
        `/project/${ref}/graphql/v1`,
        { query: '{ itemsCollection { edges { node { id name } } } }' },
        {
          apikey: service,
          authorization: `Bearer ${service}`,
        },
      );
    const one = { data: { itemsCollection: { edges: [{ node: { id: 1, name: 'one' } }] } } };
    expect((await read(b)).body).toEqual(one);

    // The tenant's CHECK constraint calls its own function: restoring the data evaluates it, and it
    // makes the tenant's login a superuser if it ever runs as one (project-restore.ts).
    const planted = await sql(
      a,
      `create function public.canary_check(int) returns boolean language plpgsql as $f$
       begin
         if (select rolsuper from pg_catalog.pg_roles where rolname = current_user) then
           execute format('alter role %I superuser', 'postgres.${ref}');
         end if;
         return true;
       end $f$;
       alter table items add constraint items_canary check (public.canary_check(id));`,
    );
    expect(planted.status, planted.text).toBe(201);

    const out = strata(['projects', 'move', ref, '--to', 'second']);
    expect(out).toContain(`Project ${ref} moved to second.`);
    expect(await serverOf(ref)).toBe('second');
    const left = await withClient(PG15, (c) =>
      c.query('select 1 from pg_database where datname = $1', [`project_${ref}`]),
    );
    expect(left.rowCount).toBe(0);

    // Both nodes had the project's context: they now read and write it on the new server.
    expect((await read(b)).body).toEqual(one);
    const ins = await sql(a, `insert into items values (2, 'two') returning id`);
    expect(ins.status, ins.text).toBe(201);
    const where = await sql(b, `select inet_server_port() as port, (select count(*)::int from items) as n`);
    expect(where.body).toEqual([{ port: Number(new URL(cluster.secondUrl).port), n: 2 }]);
    // The project's own login kept its password (the SCRAM verifier was copied).
    const login = new URL(withDatabase(cluster.secondUrl, `project_${ref}`));
    login.username = encodeURIComponent(`postgres.${ref}`);
    login.password = 'mover-password-1';
    const me = await withClient(login.toString(), (c) => c.query<{ u: string }>('select current_user as u'));
    expect(me.rows[0]?.u).toBe(`postgres.${ref}`);
    const su = await withClient(cluster.secondUrl, (c) =>
      c.query<{ s: boolean }>('select rolsuper as s from pg_roles where rolname = $1', [`postgres.${ref}`]),
    );
    expect(su.rows).toEqual([{ s: false }]);
  });
});
