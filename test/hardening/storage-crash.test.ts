/**
 * Storage after crashes (issue 12 item 6), end to end on `strata start` as a child process with its
 * own embedded PostgreSQL: an aborted upload leaves no temporary file; a deleted bucket leaves no
 * folder; then 20 uploads of >= 64 MiB in rounds, the server killed with SIGKILL at a random point
 * of each round, restarted; at the end the temporary folder is empty, every row has its bytes,
 * no version file lacks a committed row, and every acknowledged upload reads back byte-exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freeTestPort } from '../support/free-port.js';
import { servingBanner, spawnCli, repoRoot as root, strataBin as bin } from '../support/strata-process.js';
import { eventually } from '../support/eventually.js';

const dataDir = mkdtempSync(join(tmpdir(), 'strata-crash-'));
const MiB = 1024 * 1024;

interface Server {
  child: ChildProcess;
  status: Record<string, string>;
}

let port = 0;
let current: Server | undefined;

async function start(env: Record<string, string>): Promise<Server> {
  if (current) await stop(current, 'SIGKILL');
  port = await freeTestPort();
  const p = spawnCli(['start', '--port', String(port), '--db-port', '0', '--console-port', '0'], {
    env: { ...process.env, DATABASE_URL: '', STRATA_DATA_DIR: dataDir, ...env },
  });
  const { child } = p;
  await servingBanner(p, { timeoutMs: 120_000 });
  const status = JSON.parse(
    execFileSync(process.execPath, [bin, 'status', '--json'], {
      env: { ...process.env, DATABASE_URL: '', STRATA_DATA_DIR: dataDir },
    }).toString(),
  );
  current = { child, status };
  return current;
}

function stop(s: Server, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (s.child.exitCode !== null || s.child.signalCode !== null) return resolve();
    s.child.once('exit', () => resolve());
    s.child.kill(signal);
  });
}

async function api(s: Server, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${s.status.storage_url}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${s.status.service_role_key}`,
      ...(init.headers as Record<string, string> | undefined),
    },
  });
}

/** A deterministic body: `chunks` MiB blocks of `seed`, each stamped with its index. */
interface Body {
  seed: Buffer;
  chunks: number;
}
function chunkOf(b: Body, i: number): Buffer {
  const c = Buffer.from(b.seed);
  c.writeUInt32BE(i, 0);
  return c;
}
function sha(b: Body): string {
  const h = createHash('sha256');
  for (let i = 0; i < b.chunks; i++) h.update(chunkOf(b, i));
  return h.digest('hex');
}

/** Streams the body; resolves with the status (undefined when the connection died). */
function upload(
  s: Server,
  path: string,
  b: Body,
  headers: Record<string, string>,
  onBytes: (n: number) => void,
  abortAfter?: number,
): Promise<number | undefined> {
  return new Promise((resolve) => {
    const url = new URL(`${s.status.storage_url}${path}`);
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          authorization: `Bearer ${s.status.service_role_key}`,
          'content-type': 'application/octet-stream',
          'content-length': String(b.chunks * MiB),
          ...headers,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
        res.on('error', () => resolve(undefined));
      },
    );
    req.on('error', () => resolve(undefined));
    let i = 0;
    const write = () => {
      while (i < b.chunks) {
        if (abortAfter !== undefined && i * MiB >= abortAfter) {
          req.destroy();
          return;
        }
        const ok = req.write(chunkOf(b, i++));
        onBytes(MiB);
        if (!ok) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

function storageRoot(s: Server): string {
  return join(dataDir, 'projects', String(s.status.project_ref), 'storage');
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((f) => f.isFile())
    .map((f) => join(f.parentPath, f.name));
}

function emptyDirsUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((f) => f.isDirectory() && readdirSync(join(f.parentPath, f.name)).length === 0)
    .map((f) => join(f.parentPath, f.name));
}

async function sql<T extends pg.QueryResultRow>(
  s: Server,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const c = new pg.Client({ connectionString: s.status.db_url });
  await c.connect();
  try {
    return (await c.query<T>(text, params)).rows;
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  // Asynchronously: a build blocking this worker's event loop would time out vitest's RPC.
  await promisify(execFile)(process.execPath, ['scripts/build-if-needed.mjs'], { cwd: root });
}, 900_000);

afterAll(async () => {
  if (current) await stop(current, 'SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

describe('storage after aborts and crashes', () => {
  it('an aborted upload leaves no temporary file; a deleted bucket leaves no folder', async () => {
    // A long grace: only the abort path itself may remove the temporary file here.
    const s = await start({
      STRATA_STORAGE_SWEEP_GRACE_MS: '3600000',
      STRATA_STORAGE_SWEEP_INTERVAL_MS: '0',
    });
    const created = await api(s, '/bucket', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'gone' }),
    });
    expect(created.status).toBe(200);
    const b: Body = { seed: randomBytes(MiB), chunks: 16 };
    for (let n = 0; n < 3; n++) {
      const st = await upload(s, `/object/gone/aborted-${n}.bin`, b, {}, () => {}, 4 * MiB + n * MiB);
      expect(st).toBeUndefined();
    }
    await eventually(() => filesUnder(join(storageRoot(s), '.tmp')).length === 0, {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: 'aborted uploads removed their temporary files',
    });
    expect(filesUnder(join(storageRoot(s), 'buckets'))).toEqual([]);

    const small: Body = { seed: randomBytes(MiB), chunks: 1 };
    expect(await upload(s, '/object/gone/a/b/c.bin', small, {}, () => {})).toBe(200);
    expect(existsSync(join(storageRoot(s), 'buckets', 'gone'))).toBe(true);
    expect((await api(s, '/object/gone/a/b/c.bin', { method: 'DELETE' })).status).toBe(200);
    expect((await api(s, '/bucket/gone', { method: 'DELETE' })).status).toBe(200);
    expect(existsSync(join(storageRoot(s), 'buckets', 'gone'))).toBe(false);
    await stop(s, 'SIGTERM');
  }, 300_000);

  it('20 uploads of >= 64 MiB killed at random points: nothing leaks, nothing acknowledged is lost', async () => {
    const env = { STRATA_STORAGE_SWEEP_GRACE_MS: '1000', STRATA_STORAGE_SWEEP_INTERVAL_MS: '1000' };
    let s = await start(env);
    const bucket = await api(s, '/bucket', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'crash' }),
    });
    expect(bucket.status).toBe(200);

    /** Per key: the attempts in order, each with its hash and whether it was acknowledged. */
    const attempts = new Map<string, { hash: string; acked: boolean }[]>();
    // 20 uploads one after another; at 4 of them, chosen at random, the server is killed at a
    // random point: inside the body, or after all of it was sent (between the bytes' rename and the
    // row's commit, or just after the acknowledgement), then restarted.
    const UPLOADS = 20;
    const KILLS = 4;
    const killAt = new Set<number>();
    while (killAt.size < KILLS) killAt.add(Math.floor(Math.random() * UPLOADS));
    let acked = 0;
    const keys: string[] = [];
    for (let i = 0; i < UPLOADS; i++) {
      // Some uploads overwrite an earlier key (x-upsert), so replaced versions are in play too.
      const reuse = i >= 5 && i % 4 === 0;
      const key = reuse ? (keys[i - 5] ?? `dir-${i}/file.bin`) : `dir-${i % 3}/file-${i}.bin`;
      keys.push(key);
      const body: Body = { seed: randomBytes(MiB), chunks: 64 + (i % 4) };
      const server = s;
      let status: number | undefined;
      if (!killAt.has(i)) {
        status = await upload(
          server,
          `/object/crash/${key}`,
          body,
          reuse ? { 'x-upsert': 'true' } : {},
          () => {},
        );
      } else {
        const total = body.chunks * MiB;
        const point = Math.random() * total * 1.2;
        let sent = 0;
        let killed = false;
        const kill = () => {
          if (killed) return;
          killed = true;
          void stop(server, 'SIGKILL');
        };
        const result = upload(
          server,
          `/object/crash/${key}`,
          body,
          reuse ? { 'x-upsert': 'true' } : {},
          (n) => {
            sent += n;
            if (sent >= point) kill();
          },
        );
        if (point >= total) setTimeout(kill, Math.random() * 500);
        status = await result;
        kill();
        await stop(server, 'SIGKILL');
        s = await start(env);
      }
      if (status === 200) acked++;
      const list = attempts.get(key) ?? [];
      list.push({ hash: sha(body), acked: status === 200 });
      attempts.set(key, list);
    }
    await stop(s, 'SIGKILL');

    s = await start(env);
    const storage = storageRoot(s);
    await eventually(() => filesUnder(join(storage, '.tmp')).length === 0, {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: 'temporary files swept',
    });

    const rowsAndFiles = async () => {
      const rows = await sql<{ name: string; version: string; size: string }>(
        s,
        `select name, version, metadata->>'size' as size from storage.objects where bucket_id = 'crash'`,
      );
      const files = filesUnder(join(storage, 'buckets'));
      return { rows, files };
    };
    await eventually(
      async () => {
        const { rows, files } = await rowsAndFiles();
        return files.length === rows.length;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'orphan version files swept' },
    );
    const { rows, files } = await rowsAndFiles();
    const expectedFiles = rows
      .map((r) => join(storage, 'buckets', 'crash', ...r.name.split('/'), `~${r.version}`))
      .sort();
    // Every row has its bytes (with the recorded size), and every version file has its row.
    expect(files.sort()).toEqual(expectedFiles);
    for (const r of rows) {
      const f = join(storage, 'buckets', 'crash', ...r.name.split('/'), `~${r.version}`);
      expect(statSync(f).size).toBe(Number(r.size));
    }
    await eventually(() => emptyDirsUnder(join(storage, 'buckets')).length === 0, {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: 'empty folders swept',
    });

    // Every acknowledged upload reads back byte-exact: a key holds its last acknowledged body, or
    // a later one whose commit happened just before the kill (it was never acknowledged).
    for (const [key, list] of attempts) {
      const lastAck = list.map((a) => a.acked).lastIndexOf(true);
      const res = await api(s, `/object/crash/${key}`);
      if (lastAck < 0 && res.status !== 200) continue;
      expect(res.status, key).toBe(200);
      const got = createHash('sha256')
        .update(Buffer.from(await res.arrayBuffer()))
        .digest('hex');
      const allowed = list.slice(Math.max(lastAck, 0)).map((a) => a.hash);
      expect(allowed, key).toContain(got);
    }
    // 20 uploads were attempted; how many were acknowledged depends on the random kill points.
    expect([...attempts.values()].flat().length).toBe(UPLOADS);
    expect(acked).toBeGreaterThanOrEqual(UPLOADS - KILLS);
    console.log(`storage-crash: ${acked} of ${UPLOADS} uploads acknowledged, ${rows.length} rows`);
    await stop(s, 'SIGTERM');
  }, 600_000);
});
