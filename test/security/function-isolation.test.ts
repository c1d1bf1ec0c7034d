/**
 * Function → other projects (issue 29, item 3), written as a token holder who made their own
 * organization and project and deployed a function there: warm workers used to listen on
 * 127.0.0.1 ports without authentication, so that function could find another project's worker by
 * scanning loopback and call it directly (no verify_jwt, the victim's secrets in the answer, none
 * of the limits). Workers now listen on a Unix socket in their own temp folder, which no other
 * worker may open (Deno allows a Unix socket only where the worker may read and write).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { configFromEnv } from '../../src/config.js';
import type { FunctionWorker } from '../../src/functions/worker.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { api, createOtherUser } from '../support/management.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { deployOne, invokeFunction } from '../support/functions.js';

let tp: TestPlatform;
/** The victim: the default project, its function needs a JWT and holds a secret. */
let victim: ProjectContext;
/** The attacker's own project (own organization, own token). */
let attacker: ProjectContext;
let attackerToken: string;
const MARKER = `victim-secret-${Math.random().toString(36).slice(2)}`;

const VICTIM = `
Deno.serve((req) => {
  const spin = Number(new URL(req.url).searchParams.get('spin') ?? 0);
  const end = Date.now() + spin;
  while (Date.now() < end) {}
  return Response.json({ secret: Deno.env.get('VICTIM_SECRET'), service: Deno.env.get('SUPABASE_SERVICE_ROLE_KEY') });
});`;

/** Tries every address it is given, as a function scanning loopback would. */
const SCANNER = `
const attempt = async (f) => { try { return 'answered: ' + (await f()); } catch (e) { return String(e).slice(0, 120); } };
Deno.serve(async (req) => {
  const { ports, sockets, dirs, pg } = await req.json();
  const out = { ports: {}, sockets: {}, dirs: {}, pg: null };
  await Promise.all(ports.map(async (port) => {
    out.ports[port] = await attempt(async () => {
      const paths = ['/victim', '/victim?spin=100', '/'];
      const texts = [];
      for (const p of paths) {
        const r = await fetch('http://127.0.0.1:' + port + p, { signal: AbortSignal.timeout(3000) });
        texts.push(r.status + ' ' + (await r.text()).slice(0, 500));
      }
      return texts.join(' | ');
    });
  }));
  for (const path of sockets) {
    out.sockets[path] = await attempt(async () => {
      const c = await Deno.connect({ transport: 'unix', path });
      await c.write(new TextEncoder().encode('GET /victim HTTP/1.1\\r\\nhost: x\\r\\nconnection: close\\r\\n\\r\\n'));
      const buf = new Uint8Array(4096);
      const n = await c.read(buf);
      c.close();
      return new TextDecoder().decode(buf.subarray(0, n ?? 0));
    });
  }
  for (const dir of dirs) {
    out.dirs[dir] = await attempt(async () => {
      const names = [];
      for await (const e of Deno.readDir(dir)) names.push(e.name);
      return names.join(',');
    });
  }
  // PostgreSQL's superuser from a function: a startup packet for "postgres", no password.
  out.pg = await attempt(async () => {
    const u = new URL(pg);
    const c = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
    const enc = new TextEncoder();
    const params = enc.encode('user\\0postgres\\0database\\0postgres\\0\\0');
    const msg = new Uint8Array(8 + params.length);
    const view = new DataView(msg.buffer);
    view.setInt32(0, msg.length);
    view.setInt32(4, 196608);
    msg.set(params, 8);
    await c.write(msg);
    const head = new Uint8Array(9);
    let got = 0;
    while (got < 9) { const n = await c.read(head.subarray(got)); if (n === null) break; got += n; }
    c.close();
    return String.fromCharCode(head[0]) + ' ' + new DataView(head.buffer).getInt32(5);
  });
  return Response.json(out);
});`;

function liveWorkers(): FunctionWorker[] {
  const runtime = tp.functions.runtime as unknown as {
    pools: Map<string, FunctionWorker[]>;
  };
  return [...runtime.pools.values()].flat().filter((w) => w.alive);
}

/** TCP ports listened on by the platform's process and every worker (what a loopback scan finds). */
function listeningPorts(pids: number[]): number[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {}
    for (const fd of fds)
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m?.[1]) inodes.add(m[1]);
      } catch {}
  }
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6'])
    for (const line of readFileSync(file, 'latin1').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A' && f[9] && inodes.has(f[9]))
        ports.add(Number.parseInt(f[1]?.split(':').pop() ?? '0', 16));
    }
  return [...ports];
}

async function invokeVictim(headers: Record<string, string> = {}, query = ''): Promise<Response> {
  return invokeFunction(tp, victim.ref, `victim${query}`, { headers });
}

beforeAll(async () => {
  tp = await startTestPlatform({
    functions: {
      ...configFromEnv({}).functions,
      prewarm: false,
      cpuBudgetMs: 1_000,
      requestTimeoutMs: 30_000,
    },
  });
  victim = await tp.platform.defaultProject();
  const set = await api(tp, 'POST', `/v1/projects/${victim.ref}/secrets`, {
    body: [{ name: 'VICTIM_SECRET', value: MARKER }],
  });
  expect(set.status).toBe(201);
  expect((await deployOne(tp, victim.ref, 'victim', VICTIM, { verify_jwt: true })).status).toBe(201);

  const other = await createOtherUser(tp, 'scanner');
  attackerToken = other.token;
  const created = await api(tp, 'POST', '/v1/projects', {
    token: attackerToken,
    body: { name: 'scanner', organization_slug: other.orgSlug, db_pass: 'scanner-pass-1' },
  });
  expect(created.status, created.text).toBe(201);
  const ctx = await tp.platform.project(created.body.ref);
  if (!ctx) throw new Error('attacker project not loaded');
  attacker = ctx;
  const d = await deployOne(tp, attacker.ref, 'scanner', SCANNER, {
    verify_jwt: false,
    token: attackerToken,
  });
  expect(d.status, JSON.stringify(d.body)).toBe(201);
});

afterAll(async () => {
  await tp?.close();
});

describe("another project's worker is out of a function's reach", () => {
  it("a loopback scan from the attacker's function gets no answer from the victim's warm worker", async () => {
    // The victim's worker is warm (a legitimate, authenticated call).
    const ok = await invokeVictim({ authorization: `Bearer ${victim.anonKey}` });
    expect(ok.status).toBe(200);
    expect((await ok.json()).secret).toBe(MARKER);
    // The scanner's worker is warm too, then it is given every port the platform and all workers listen on.
    await invokeFunction(tp, attacker.ref, 'scanner', {
      method: 'POST',
      body: JSON.stringify({ ports: [], sockets: [], dirs: [], pg: 'postgres://127.0.0.1:1' }),
    });
    const workers = liveWorkers();
    const victimWorker = workers.find((w) => w.spec.key === `${victim.ref}/victim`);
    expect(victimWorker).toBeDefined();
    const ports = listeningPorts([process.pid, ...workers.map((w) => w.child.pid ?? 0)]);
    const res = await invokeFunction(tp, attacker.ref, 'scanner', {
      method: 'POST',
      body: JSON.stringify({
        ports,
        sockets: [],
        dirs: [],
        pg: 'postgres://127.0.0.1:1',
      }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(text).not.toContain(MARKER);
    expect(text).not.toContain(victim.serviceRoleKey);
    // Nothing but the platform's own public ports (API and console origins) answers: no worker has
    // a TCP port.
    const answered = Object.entries(JSON.parse(text).ports as Record<string, string>)
      .filter(([, v]) => v.startsWith('answered'))
      .map(([p]) => Number(p));
    const publicPorts = [tp.port, tp.consoleUrl ? Number(new URL(tp.consoleUrl).port) : undefined];
    expect(answered.sort()).toEqual(publicPorts.filter((p) => p !== undefined).sort());
  });

  it("the victim worker's socket and temp folder cannot be opened from the attacker's function", async () => {
    await invokeVictim({ authorization: `Bearer ${victim.anonKey}` });
    const victimWorker = liveWorkers().find((w) => w.spec.key === `${victim.ref}/victim`);
    if (!victimWorker) throw new Error('no victim worker');
    const dir = victimWorker.spec.tmpDir;
    const res = await invokeFunction(tp, attacker.ref, 'scanner', {
      method: 'POST',
      body: JSON.stringify({
        ports: [],
        sockets: [`${dir}/.worker.sock`, dir],
        dirs: [dir, `${dir}/..`],
        pg: 'postgres://127.0.0.1:1',
      }),
    });
    const out = await res.json();
    expect(JSON.stringify(out)).not.toContain(MARKER);
    for (const v of [...Object.values(out.sockets), ...Object.values(out.dirs)] as string[])
      expect(v).toMatch(/NotCapable|PermissionDenied/);
  });

  it('PostgreSQL superuser from a function: a password is asked for, never trust (guard)', async () => {
    const res = await invokeFunction(tp, attacker.ref, 'scanner', {
      method: 'POST',
      body: JSON.stringify({ ports: [], sockets: [], dirs: [], pg: attacker.superuserUrl }),
    });
    const { pg } = await res.json();
    // 'R' with a non-zero code: an authentication request (10 = SASL); 0 would be "trusted".
    expect(pg).toMatch(/^answered: R [1-9]\d*$/);
  });
});

describe('an end user reaches a worker only through the platform, with its checks', () => {
  it('forged platform-looking headers do not skip verify_jwt (guard)', async () => {
    const forged: Record<string, string>[] = [
      {},
      { 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1' },
      { 'x-strata-worker': '1', 'x-strata-internal': 'true', 'x-supabase-internal': '1' },
      { host: 'localhost' },
    ];
    for (const headers of forged) {
      const r = await invokeVictim(headers);
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(await r.text()).not.toContain(MARKER);
    }
  });

  it('limits hold: the only way in is the platform, and a busy loop there ends 546', async () => {
    const r = await invokeVictim({ authorization: `Bearer ${victim.anonKey}` }, '?spin=20000');
    expect(r.status).toBe(546);
    expect(r.headers.get('sb-error-code')).toBe('WORKER_LIMIT');
  });
});
