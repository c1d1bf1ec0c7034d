/**
 * The data-folder lock on its own: of several starts racing in one folder exactly one wins; a
 * live owner is named (URL and pid) and never displaced; a dead owner, a reused pid (same pid,
 * other start time) and a half-written lock are taken over. And the embedded server's own
 * guard: a PostgreSQL whose parent is alive is never stopped by a second start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  InstanceLock,
  InstanceRunningError,
  lockFile,
  runningInstance,
} from '../../src/platform/instance-lock.js';
import { parentPid, pidAlive, processStartTime } from '../../src/db/pid.js';
import { startEmbedded } from '../../src/db/embedded.js';
import { eventually } from '../support/eventually.js';

const root = new URL('../../', import.meta.url).pathname;
const base = mkdtempSync(join(tmpdir(), 'strata-lock-'));
let n = 0;
const freshDir = () => {
  const d = join(base, String(n++));
  mkdirSync(d);
  return d;
};

beforeAll(() => {
  // The racing starts run the built lock module.
  execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.mjs')], { stdio: 'ignore' });
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A process that lives until killed, standing in for another Strata. */
function sleeper() {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], { stdio: 'ignore' });
  return child;
}

describe('the data-folder lock', () => {
  it('of eight starts racing in one folder, exactly one wins', async () => {
    const dir = freshDir();
    // The winner holds the lock until every racer has answered (its stdin ends then), so a slow
    // machine that spreads the eight starts over seconds cannot let a late one win legitimately.
    const script = `
      import { InstanceLock } from ${JSON.stringify(join(root, 'dist', 'platform', 'instance-lock.js'))};
      try {
        const l = InstanceLock.acquire(process.argv[1]);
        console.log('won');
        process.stdin.on('end', () => l.unlock());
        process.stdin.resume();
      } catch (e) {
        console.log('lost: ' + e.message);
        process.exitCode = 3;
      }`;
    const children = Array.from({ length: 8 }, () =>
      spawn(process.execPath, ['--input-type=module', '-e', script, dir], {
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    const runs = children.map(
      (c) =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          let out = '';
          c.stdout.on('data', (d) => (out += d));
          c.stderr.on('data', (d) => (out += d));
          c.on('exit', (code) => resolve({ code, out }));
        }),
    );
    const answered = children.map(
      (c) =>
        new Promise<void>((resolve) => {
          c.stdout.once('data', () => resolve());
          c.once('exit', () => resolve());
        }),
    );
    await Promise.all(answered);
    for (const c of children) c.stdin.end();
    const results = await Promise.all(runs);
    const winners = results.filter((r) => r.out.includes('won'));
    expect(winners, JSON.stringify(results)).toHaveLength(1);
    for (const r of results.filter((x) => !x.out.includes('won'))) {
      expect(r.code).toBe(3);
      expect(r.out).toMatch(/already (running|starting) in/);
    }
    expect(existsSync(lockFile(dir))).toBe(false);
  });

  it('names a live owner (URL and pid) and leaves its lock in place', () => {
    const dir = freshDir();
    const other = sleeper();
    try {
      const pid = other.pid as number;
      const owner = { pid, start_time: processStartTime(pid), url: 'http://127.0.0.1:5999', started_at: '' };
      writeFileSync(lockFile(dir), JSON.stringify(owner));
      let err: unknown;
      try {
        InstanceLock.acquire(dir);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InstanceRunningError);
      expect((err as Error).message).toContain('http://127.0.0.1:5999');
      expect((err as Error).message).toContain(`pid ${pid}`);
      expect(runningInstance(dir)?.pid).toBe(pid);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('takes over a dead owner, a reused pid and a half-written lock', async () => {
    // Dead owner: a process that has exited.
    const dead = sleeper();
    const deadPid = dead.pid as number;
    const deadStart = processStartTime(deadPid);
    await new Promise((r) => {
      dead.once('exit', r);
      dead.kill('SIGKILL');
    });
    const d1 = freshDir();
    writeFileSync(lockFile(d1), JSON.stringify({ pid: deadPid, start_time: deadStart, started_at: '' }));
    expect(runningInstance(d1)).toBeUndefined();
    const l1 = InstanceLock.acquire(d1);
    expect(runningInstance(d1)?.pid).toBe(process.pid);
    l1.setUrl('http://127.0.0.1:1234');
    expect(runningInstance(d1)?.url).toBe('http://127.0.0.1:1234');
    l1.unlock();
    expect(existsSync(lockFile(d1))).toBe(false);

    // Reused pid: the pid is alive, but it is another process (another start time).
    const other = sleeper();
    try {
      const d2 = freshDir();
      writeFileSync(lockFile(d2), JSON.stringify({ pid: other.pid, start_time: '1', started_at: '' }));
      InstanceLock.acquire(d2).unlock();
    } finally {
      other.kill('SIGKILL');
    }

    // Half-written (the owner crashed while writing it).
    const d3 = freshDir();
    writeFileSync(lockFile(d3), '{"pid": 12');
    InstanceLock.acquire(d3).unlock();
  });
});

describe('the embedded server in a folder', () => {
  it('a second start never stops a PostgreSQL whose Strata (parent) is alive', async () => {
    const dir = freshDir();
    const first = await startEmbedded({ dataDir: join(dir, 'db'), port: 0, password: 'p' });
    try {
      const pid = first.pid;
      await expect(startEmbedded({ dataDir: join(dir, 'db'), port: 0, password: 'p' })).rejects.toThrow(
        /already running/,
      );
      expect(first.pid).toBe(pid);
      const c = new pg.Client({ connectionString: first.superuserUrl() });
      await c.connect();
      expect((await c.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
      await c.end();
    } finally {
      await first.stop();
    }
  });

  it('a PostgreSQL that exits before it is ready is reported with its last line, not as nothing', async () => {
    const dir = join(freshDir(), 'db');
    await (await startEmbedded({ dataDir: dir, port: 0, password: 'p' })).stop();
    appendFileSync(join(dir, 'postgresql.conf'), "\nshared_buffers = 'lots'\n");
    await expect(startEmbedded({ dataDir: dir, port: 0, password: 'p' })).rejects.toThrow(
      /^PostgreSQL did not start on .* \(port \d+\): .*shared_buffers/,
    );
    expect(existsSync(join(dir, 'postmaster.pid'))).toBe(false);
  });

  it('a postmaster.pid naming a reused pid (an orphaned stranger whose command line says postgres) leaves the stranger alone', async () => {
    const dir = join(freshDir(), 'db');
    mkdirSync(dir);
    // An orphan (its shell has exited) with "postgres" in its command line, working in another folder.
    const out = execFileSync(
      'sh',
      [
        '-c',
        `${JSON.stringify(process.execPath)} -e "setTimeout(() => {}, 120000)" postgres >/dev/null 2>&1 & echo $!`,
      ],
      {
        cwd: base,
      },
    );
    const stranger = Number(out.toString().trim());
    try {
      await eventually(() => parentPid(stranger) === 1 || !pidAlive(stranger), {
        timeoutMs: 1_000,
        intervalMs: 20,
      }).catch(() => {});
      writeFileSync(join(dir, 'postmaster.pid'), `${stranger}\n${dir}\n`);
      const server = await startEmbedded({ dataDir: dir, port: 0, password: 'p' });
      try {
        expect(pidAlive(stranger)).toBe(true);
        expect(server.pid).not.toBe(stranger);
      } finally {
        await server.stop();
      }
    } finally {
      if (pidAlive(stranger)) process.kill(stranger, 'SIGKILL');
    }
  });
});
