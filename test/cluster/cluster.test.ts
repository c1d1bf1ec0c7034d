/**
 * Cluster mode end to end (`npm run test:cluster`, README "Running as a cluster"): two Strata nodes
 * on one platform database, two PostgreSQL servers, S3 (s3rver). Requests alternate between the
 * nodes: what one node does, the other sees on its next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { signJwt } from '../../src/auth/jwt.js';
import { withClient, withDatabase } from '../../src/db/pool.js';
import { type Cluster, type Node, startCluster, stopNode } from './cluster-support.js';
import { startRetryingProxy } from './retrying-proxy.js';
import { eventually } from '../support/eventually.js';

const root = new URL('../../', import.meta.url).pathname;
let cluster: Cluster;
let a: Node;
let b: Node;
beforeAll(async () => {
  cluster = await startCluster();
  [a, b] = cluster.nodes as [Node, Node];
}, 180_000);
afterAll(async () => {
  await cluster?.close();
}, 60_000);

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are inspected freely in tests
  body: any;
  text: string;
}

async function call(
  node: Node,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: unknown; raw?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | undefined = opts.raw;
  if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  const res = await fetch(`${node.url}${path}`, { method, headers, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text };
}

const mgmt = (node: Node, method: string, path: string, body?: unknown) =>
  call(node, method, `/v1${path}`, { headers: { authorization: `Bearer ${cluster.accessToken}` }, body });

interface Project {
  ref: string;
  anon: string;
  service: string;
  jwtSecret: string;
  server: string;
}
const projects: Project[] = [];
const deleted = new Set<string>();

/** `strata ARGS` with the nodes' environment (as an operator runs it on a node). */
function strata(args: string[]): string {
  return execFileSync(process.execPath, [join(root, 'bin', 'strata.js'), ...args], {
    env: cluster.env,
    encoding: 'utf8',
  });
}

async function s3Keys(prefix: string): Promise<string[]> {
  const s3 = new S3Client({
    endpoint: cluster.env.STRATA_S3_ENDPOINT,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  try {
    const out = await s3.send(
      new ListObjectsV2Command({ Bucket: cluster.env.STRATA_S3_BUCKET, Prefix: prefix }),
    );
    return (out.Contents ?? []).map((o) => o.Key ?? '');
  } finally {
    s3.destroy();
  }
}

async function platformRow(ref: string): Promise<{ jwt_secret: string; db_server: string }> {
  return withClient(withDatabase(cluster.primaryUrl, cluster.platformDatabase), async (c) => {
    const { rows } = await c.query('select jwt_secret, db_server from projects where ref = $1', [ref]);
    return rows[0];
  });
}

const userToken = (p: Project, sub: string) =>
  signJwt(p.jwtSecret, { role: 'authenticated', sub, aud: 'authenticated' }, { expiresInSeconds: 3600 });

const gql = (node: Node, p: Project, token: string, query: string) =>
  call(node, 'POST', `/project/${p.ref}/graphql/v1`, {
    headers: { apikey: p.anon, authorization: `Bearer ${token}` },
    body: { query },
  });

const sql = (node: Node, p: Project, query: string) =>
  mgmt(node, 'POST', `/projects/${p.ref}/database/query`, { query });

describe('cluster', () => {
  it('both nodes are ready: every database server and the bucket answer', async () => {
    for (const n of [a, b]) {
      const r = await call(n, 'GET', '/ready');
      expect(r.status, r.text).toBe(200);
      expect(r.body).toEqual({ status: 'ready', databases: { primary: 'up', second: 'up' }, storage: 'up' });
      expect((await call(n, 'GET', '/health')).status).toBe(200);
    }
  });

  it('new projects go to the server with the most headroom, through either node', async () => {
    for (const [i, node] of [a, b, a].entries()) {
      const r = await mgmt(node, 'POST', '/projects', {
        name: `cluster ${i}`,
        organization_id: 'default-org',
        db_pass: 'cluster-test-password',
      });
      expect(r.status, r.text).toBe(201);
      const ref = r.body.id as string;
      const keys = await mgmt(i % 2 ? a : b, 'GET', `/projects/${ref}/api-keys`);
      expect(keys.status, keys.text).toBe(200);
      const key = (name: string) =>
        (keys.body as { name: string; api_key: string }[]).find((k) => k.name === name)?.api_key ?? '';
      const row = await platformRow(ref);
      projects.push({
        ref,
        anon: key('anon'),
        service: key('service_role'),
        jwtSecret: row.jwt_secret,
        server: row.db_server,
      });
    }
    // The default project sits on the primary: the first new one goes to the second server, the
    // next (a tie) to the primary, the third to the second again.
    expect(projects.map((p) => p.server)).toEqual(['second', 'primary', 'second']);
  });

  it('GraphQL under RLS: DDL through one node, reads and writes through the other', async () => {
    for (const p of projects.slice(0, 2)) {
      // b builds and caches this project's GraphQL schema before the DDL.
      const before = await gql(b, p, p.anon, '{ __typename }');
      expect(before.body, before.text).toEqual({ data: { __typename: 'Query' } });
      const ddl = await sql(
        a,
        p,
        `create table notes (id bigserial primary key, owner uuid not null default auth.uid(), body text not null);
         alter table notes enable row level security;
         create policy own on notes using (owner = auth.uid()) with check (owner = auth.uid());
         grant select, insert on notes to authenticated;
         grant usage on sequence notes_id_seq to authenticated;`,
      );
      expect(ddl.status, ddl.text).toBe(201);
      const alice = await userToken(p, randomUUID());
      const bob = await userToken(p, randomUUID());
      const ins = await gql(
        b,
        p,
        alice,
        'mutation { insertIntonotesCollection(objects: [{body: "hello"}]) { affectedCount } }',
      );
      expect(ins.body, ins.text).toEqual({ data: { insertIntonotesCollection: { affectedCount: 1 } } });
      const mine = await gql(a, p, alice, '{ notesCollection { edges { node { body } } } }');
      expect(mine.body, mine.text).toEqual({
        data: { notesCollection: { edges: [{ node: { body: 'hello' } }] } },
      });
      const theirs = await gql(b, p, bob, '{ notesCollection { edges { node { body } } } }');
      expect(theirs.body, theirs.text).toEqual({ data: { notesCollection: { edges: [] } } });
    }
  });

  it('objects: uploaded through one node, downloaded through the other; a resumable upload moves nodes', async () => {
    for (const p of projects.slice(0, 2)) {
      const auth = { apikey: p.service, authorization: `Bearer ${p.service}` };
      const base = `/project/${p.ref}/storage/v1`;
      const bucket = await call(a, 'POST', `${base}/bucket`, { headers: auth, body: { name: 'docs' } });
      expect(bucket.status, bucket.text).toBe(200);
      const up = await call(b, 'POST', `${base}/object/docs/hello.txt`, {
        headers: { ...auth, 'content-type': 'text/plain' },
        raw: 'hello from b',
      });
      expect(up.status, up.text).toBe(200);
      const down = await call(a, 'GET', `${base}/object/docs/hello.txt`, { headers: auth });
      expect(down.status).toBe(200);
      expect(down.text).toBe('hello from b');

      const bytes = Buffer.from('0123456789'.repeat(3000));
      const b64 = (s: string) => Buffer.from(s).toString('base64');
      const tusHeaders = { ...auth, 'tus-resumable': '1.0.0' };
      const created = await fetch(`${a.url}${base}/upload/resumable`, {
        method: 'POST',
        headers: {
          ...tusHeaders,
          'upload-length': String(bytes.length),
          'upload-metadata': `bucketName ${b64('docs')},objectName ${b64('big.bin')},contentType ${b64('application/octet-stream')}`,
        },
      });
      expect(created.status, await created.text()).toBe(201);
      const id = (created.headers.get('location') ?? '').split('/').pop();
      const patch = (node: Node, offset: number, chunk: Buffer) =>
        fetch(`${node.url}${base}/upload/resumable/${id}`, {
          method: 'PATCH',
          headers: {
            ...tusHeaders,
            'upload-offset': String(offset),
            'content-type': 'application/offset+octet-stream',
          },
          body: new Uint8Array(chunk),
        });
      const first = await patch(a, 0, bytes.subarray(0, 10_000));
      expect(first.status, await first.text()).toBe(204);
      const head = await fetch(`${b.url}${base}/upload/resumable/${id}`, {
        method: 'HEAD',
        headers: tusHeaders,
      });
      expect(head.headers.get('upload-offset')).toBe('10000');
      const rest = await patch(b, 10_000, bytes.subarray(10_000));
      expect(rest.status, await rest.text()).toBe(204);
      const got = await fetch(`${a.url}${base}/object/docs/big.bin`, { headers: auth });
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    }
  });

  it('a resumable upload stalled on one node is taken over at once by the other (its lock is released)', async () => {
    const p = projects[0] as Project;
    const auth = { apikey: p.service, authorization: `Bearer ${p.service}`, 'tus-resumable': '1.0.0' };
    const base = `/project/${p.ref}/storage/v1/upload/resumable`;
    const bytes = Buffer.from('abcdefghij'.repeat(2000));
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const created = await fetch(`${a.url}${base}`, {
      method: 'POST',
      headers: {
        ...auth,
        'upload-length': String(bytes.length),
        'upload-metadata': `bucketName ${b64('docs')},objectName ${b64('stalled.bin')}`,
      },
    });
    expect(created.status, await created.text()).toBe(201);
    const id = (created.headers.get('location') ?? '').split('/').pop();
    // A PATCH on a that sends 5,000 bytes and then nothing: it holds the upload's lock.
    const url = new URL(a.url);
    const stalled = request({
      host: url.hostname,
      port: Number(url.port),
      method: 'PATCH',
      path: `${base}/${id}`,
      headers: {
        ...auth,
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
        'content-length': bytes.length,
      },
    });
    stalled.on('error', () => {});
    stalled.write(bytes.subarray(0, 5_000));
    await new Promise((r) => setTimeout(r, 500));
    const t0 = Date.now();
    let status = 0;
    for (let attempt = 0; attempt < 5 && status !== 204; attempt++) {
      const head = await fetch(`${b.url}${base}/${id}`, { method: 'HEAD', headers: auth });
      const offset = Number(head.headers.get('upload-offset'));
      const patch = await fetch(`${b.url}${base}/${id}`, {
        method: 'PATCH',
        headers: {
          ...auth,
          'upload-offset': String(offset),
          'content-type': 'application/offset+octet-stream',
        },
        body: new Uint8Array(bytes.subarray(offset)),
      });
      status = patch.status;
      await patch.text();
    }
    stalled.destroy();
    expect(status).toBe(204);
    // Without the release the lock would be waited for up to 30 s.
    expect(Date.now() - t0).toBeLessThan(10_000);
    const got = await fetch(`${a.url}/project/${p.ref}/storage/v1/object/docs/stalled.bin`, {
      headers: auth,
    });
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('a secret set through one node is in the functions served by the other', async () => {
    const p = projects[0] as Project;
    const form = new FormData();
    form.append(
      'metadata',
      JSON.stringify({
        entrypoint_path: 'supabase/functions/greet/index.ts',
        name: 'greet',
        verify_jwt: false,
      }),
    );
    form.append(
      'file',
      new Blob(["Deno.serve(() => new Response(Deno.env.get('GREETING') ?? 'unset'));"]),
      'supabase/functions/greet/index.ts',
    );
    const dep = await fetch(`${a.url}/v1/projects/${p.ref}/functions/deploy?slug=greet`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cluster.accessToken}` },
      body: form,
    });
    expect(dep.status, await dep.text()).toBe(201);
    const invoke = async (node: Node) =>
      (await call(node, 'POST', `/project/${p.ref}/functions/v1/greet`)).text;
    expect(await invoke(b)).toBe('unset');
    for (const value of ['one', 'two']) {
      const set = await mgmt(a, 'POST', `/projects/${p.ref}/secrets`, [{ name: 'GREETING', value }]);
      expect(set.status, set.text).toBe(201);
      const listed = await mgmt(b, 'GET', `/projects/${p.ref}/secrets`);
      expect((listed.body as { name: string }[]).map((s) => s.name)).toContain('GREETING');
      expect(
        await eventually(
          async () => {
            const t = await invoke(b);
            return t === value && t;
          },
          { timeoutMs: 5_000, intervalMs: 100 },
        ),
      ).toBe(value);
    }
    // The invocations b served are in the logs, read through a (b writes them within 0.1 s).
    const { logs, invocations } = await eventually(
      async () => {
        const logs = await mgmt(a, 'GET', `/projects/${p.ref}/functions/greet/logs`);
        if (logs.status !== 200) return { logs, invocations: [] };
        const invocations = (logs.body.result as { type: string; status?: number }[]).filter(
          (e) => e.type === 'invocation',
        );
        return invocations.length >= 3 && { logs, invocations };
      },
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(logs.status, logs.text).toBe(200);
    expect(invocations.length).toBeGreaterThanOrEqual(3);
    expect(invocations.every((e) => e.status === 200)).toBe(true);
  });

  it('a network ban applied through one node is enforced by the other', async () => {
    const p = projects[1] as Project;
    const path = `/project/${p.ref}/graphql/v1`;
    for (let i = 0; i < 3; i++) expect((await from('127.0.0.2', a, path, 'not-a-key')).status).toBe(401);
    expect(
      await eventually(
        async () => {
          const s = await from('127.0.0.2', b, path, p.anon).then((r) => r.status);
          return s === 403 && s;
        },
        { timeoutMs: 5_000, intervalMs: 100 },
      ),
    ).toBe(403);
    expect((await from('127.0.0.3', b, path, p.anon)).status).toBe(200);
    const lifted = await mgmt(b, 'DELETE', `/projects/${p.ref}/network-bans`, {
      ipv4_addresses: ['127.0.0.2'],
    });
    expect(lifted.status, lifted.text).toBe(200);
    expect(
      await eventually(
        async () => {
          const s = await from('127.0.0.2', a, path, p.anon).then((r) => r.status);
          return s === 200 && s;
        },
        { timeoutMs: 5_000, intervalMs: 100 },
      ),
    ).toBe(200);
  });

  it('a drained server takes no new projects; a deleted project leaves no database and no bytes behind', async () => {
    expect(strata(['servers', 'drain', 'primary'])).toContain('takes no new projects');
    const listed = JSON.parse(strata(['servers', 'list', '--json'])) as { id: string; draining: boolean }[];
    expect(listed).toEqual([
      { id: 'primary', projects: 2, draining: true },
      { id: 'second', projects: 2, draining: false },
    ]);
    const r = await mgmt(b, 'POST', '/projects', {
      name: 'drained',
      organization_id: 'default-org',
      db_pass: 'x-password-1',
    });
    expect(r.status, r.text).toBe(201);
    expect((await platformRow(r.body.id)).db_server).toBe('second');
    strata(['servers', 'undrain', 'primary']);

    // Deleted through b while a holds the project's context: a forgets it at once.
    const p = projects[1] as Project;
    expect((await sql(a, p, 'select 1 as one')).status).toBe(201);
    const prefix = `${p.ref}/`;
    expect((await s3Keys(prefix)).length).toBeGreaterThan(0);
    const del = await mgmt(b, 'DELETE', `/projects/${p.ref}`);
    expect(del.status, del.text).toBe(200);
    const gone = await call(a, 'POST', `/project/${p.ref}/graphql/v1`, {
      headers: { apikey: p.anon },
      body: { query: '{ __typename }' },
    });
    expect(gone.status, gone.text).toBe(404);
    expect(await s3Keys(prefix)).toEqual([]);
    deleted.add(p.ref);
  });

  it('a rolling restart of both nodes behind a retrying proxy fails no request', async () => {
    const p = projects[0] as Project;
    const token = await userToken(p, randomUUID());
    const proxy = await startRetryingProxy([a.url, b.url]);
    const viaProxy: Node = { ...a, name: 'proxy', url: proxy.url };
    let running = true;
    let n = 0;
    const acked: string[] = [];
    const failures: string[] = [];
    const client = async () => {
      while (running) {
        const body = `rolling ${n++}`;
        const r = await gql(
          viaProxy,
          p,
          token,
          `mutation { insertIntonotesCollection(objects: [{body: "${body}"}]) { affectedCount } }`,
        ).catch((err: Error) => ({ status: 0, body: undefined, text: err.message }));
        if (r.status === 200 && r.body?.data?.insertIntonotesCollection?.affectedCount === 1)
          acked.push(body);
        else failures.push(`${r.status} ${r.text}`);
      }
    };
    const load = Promise.all([client(), client(), client(), client()]);
    try {
      for (const name of ['a', 'b'] as const) {
        const old = name === 'a' ? a : b;
        await stopNode(old, 60_000);
        expect(old.child.exitCode, old.output()).toBe(0);
        const fresh = await cluster.startNode(`${name}2`);
        if (name === 'a') a = fresh;
        else b = fresh;
        proxy.setTargets([a.url, b.url]);
      }
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      running = false;
      await load;
      await proxy.close();
    }
    expect(failures).toEqual([]);
    expect(acked.length).toBeGreaterThan(20);
    const rows = await sql(b, p, `select body from notes where body like 'rolling %'`);
    const stored = new Set((rows.body as { body: string }[]).map((r) => r.body));
    expect(acked.filter((w) => !stored.has(w))).toEqual([]);
  });

  it('SIGKILL of one node during a burst: the other keeps answering and every acknowledged write is there', async () => {
    const p = projects[0] as Project;
    const token = await userToken(p, randomUUID());
    const acked: string[] = [];
    let killed = false;
    const afterKill: number[] = [];
    const write = async (i: number) => {
      const node = i % 2 ? b : a;
      const wasKilled = killed;
      try {
        const r = await gql(
          node,
          p,
          token,
          `mutation { insertIntonotesCollection(objects: [{body: "burst ${i}"}]) { records { body } } }`,
        );
        if (r.status === 200 && r.body?.data) acked.push(`burst ${i}`);
        if (node === a && wasKilled) afterKill.push(r.status);
      } catch {
        if (node === a && wasKilled) afterKill.push(0);
      }
    };
    const burst: Promise<void>[] = [];
    for (let i = 0; i < 80; i++) {
      if (i === 30) {
        b.child.kill('SIGKILL');
        killed = true;
      }
      burst.push(write(i));
      if (i % 4 === 3) await Promise.all(burst.splice(0));
    }
    await Promise.all(burst);
    expect(afterKill.length).toBeGreaterThan(20);
    expect(afterKill.every((s) => s === 200)).toBe(true);
    const rows = await sql(a, p, `select body from notes where body like 'burst %'`);
    expect(rows.status, rows.text).toBe(201);
    const stored = new Set((rows.body as { body: string }[]).map((r) => r.body));
    for (const w of acked) expect(stored.has(w), w).toBe(true);
    // Node a's 40 writes all land, and node b's acknowledged ones before the kill.
    expect(acked.length).toBeGreaterThanOrEqual(50);
  });

  it('SIGTERM drains: new connections are refused, the in-flight request finishes, the node exits 0', async () => {
    const c = await cluster.startNode('c');
    const p = projects[0] as Project;
    const slow = sql(c, p, 'select pg_sleep(1.5) as slept');
    await new Promise((r) => setTimeout(r, 300));
    const exited = new Promise<number | null>((r) => c.child.once('exit', (code) => r(code)));
    c.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    await expect(fetch(`${c.url}/ready`)).rejects.toThrow();
    const answer = await slow;
    expect(answer.status, answer.text).toBe(201);
    expect(await exited).toBe(0);
    // The surviving node still answers for every project.
    for (const q of projects.filter((q) => !deleted.has(q.ref)))
      expect((await sql(a, q, 'select 1 as one')).status).toBe(201);
    await stopNode(c);
  });
});

/** A GraphQL request from a chosen local (source) address. */
function from(localAddress: string, node: Node, path: string, apikey: string): Promise<{ status: number }> {
  const url = new URL(node.url);
  const body = JSON.stringify({ query: '{ __typename }' });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: Number(url.port),
        localAddress,
        method: 'POST',
        path,
        headers: { apikey, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
