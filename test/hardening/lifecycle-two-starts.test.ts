/**
 * `strata start` twice in one data folder, as a user runs it: the second exits non-zero naming
 * the first's URL and pid, and the first (and its PostgreSQL) keeps answering; `strata status`
 * exits non-zero while the database does not answer; after the first is SIGKILLed, its orphaned
 * PostgreSQL is stopped by the next start, which then serves; Ctrl-C ends with "Strata stopped.".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildProcess, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeTestPort } from '../support/free-port.js';
import {
  type CliProcess,
  servingBanner,
  spawnCli,
  repoRoot as root,
  strataBin as bin,
} from '../support/strata-process.js';
import { pidAlive, processCwd, processRunning } from '../../src/db/pid.js';
import { eventually } from '../support/eventually.js';

const dataDir = mkdtempSync(join(tmpdir(), 'strata-two-'));
const env = {
  ...process.env,
  DATABASE_URL: '',
  STRATA_DATA_DIR: dataDir,
  STRATA_DB_HEALTH_TIMEOUT_MS: '1000',
};
const pidFile = join(dataDir, 'db', 'postmaster.pid');
const postmasterPid = () => Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
const children: ChildProcess[] = [];

function run(port: number): CliProcess {
  const r = spawnCli(['start', '--port', String(port), '--db-port', '0', '--console-port', '0'], { env });
  children.push(r.child);
  return r;
}

const started = (r: CliProcess) => servingBanner(r, { timeoutMs: 180_000 });

function status(): { code: number; out: string } {
  const r = spawnSync(process.execPath, [bin, 'status'], { env, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status ?? -1, out: r.stdout + r.stderr };
}

const health = async (port: number) =>
  (
    await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(10_000) }).catch(
      () => undefined,
    )
  )?.status ?? 0;

beforeAll(() => {
  // The CLI runs from dist/.
  execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.mjs')], { stdio: 'ignore' });
}, 300_000);

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  if (existsSync(pidFile)) {
    const pid = postmasterPid();
    // Only the folder's own PostgreSQL: on a busy machine its pid may belong to another process by now.
    if (pidAlive(pid) && processCwd(pid) === join(dataDir, 'db')) process.kill(pid, 'SIGINT');
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('two starts in one data folder', () => {
  let portA = 0;
  let a: CliProcess;

  it('the second exits non-zero naming the first (URL and pid); the first keeps answering', async () => {
    portA = await freeTestPort();
    a = run(portA);
    await started(a);
    const pgPid = postmasterPid();

    const portB = await freeTestPort();
    const b = run(portB);
    const code = await b.exited;
    expect(code, b.output()).not.toBe(0);
    expect(b.output()).toContain(`http://127.0.0.1:${portA}`);
    expect(b.output()).toContain(`pid ${a.child.pid}`);

    expect(a.child.exitCode).toBeNull();
    expect(postmasterPid()).toBe(pgPid);
    expect(pidAlive(pgPid)).toBe(true);
    expect(await health(portA)).toBe(200);
    const s = status();
    expect(s.code, s.out).toBe(0);
    expect(s.out).toContain(`http://127.0.0.1:${portA}`);
  }, 240_000);

  it('strata status exits non-zero and says so while the database does not answer', async () => {
    const pgPid = postmasterPid();
    process.kill(pgPid, 'SIGSTOP'); // hangs every new connection: a database that is gone from the network
    try {
      const down = await eventually(
        async () => {
          const s = await status();
          return s.code !== 0 && s;
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      expect(down.code, down.out).toBe(1);
      expect(down.out).toMatch(/database is down/);
      expect(down.out).not.toMatch(/anon_key|service_role_key/);
    } finally {
      process.kill(pgPid, 'SIGCONT');
    }
    expect(
      await eventually(
        async () => {
          const s = await health(portA);
          return s === 200 && s;
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      ),
    ).toBe(200);
    expect(status().code).toBe(0);
  }, 120_000);

  it('after the first is SIGKILLed, the next start stops its orphaned PostgreSQL and serves', async () => {
    const orphan = postmasterPid();
    a.child.kill('SIGKILL');
    await a.exited;
    expect(pidAlive(orphan)).toBe(true); // the PostgreSQL outlived its Strata

    const c = run(portA);
    await started(c);
    expect(c.output()).toContain(`orphaned PostgreSQL (pid ${orphan})`);
    expect(processRunning(orphan)).toBe(false); // exited (its new parent may not have reaped it yet)
    expect(postmasterPid()).not.toBe(orphan);
    expect(await health(portA)).toBe(200);

    // Ctrl-C: a clean stop, said in a last line.
    c.child.kill('SIGINT');
    expect(await c.exited).toBe(0);
    expect(c.output().trimEnd().split('\n').pop()).toBe('Strata stopped.');
    expect(existsSync(pidFile)).toBe(false);
    expect(existsSync(join(dataDir, 'strata.lock'))).toBe(false);
    expect(status().code).toBe(1);
    const stopNothing = spawnSync(process.execPath, [bin, 'stop'], {
      env,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(stopNothing.status).toBe(1);
    expect(stopNothing.stdout).toContain('not running');
  }, 240_000);
});
