/**
 * The embedded PostgreSQL dies under a running platform (its postmaster is SIGKILLed): health
 * answers 503 within a bounded wait, the supervisor restarts the server (and says so), and the
 * same client's next requests succeed without restarting Strata. Requests made meanwhile answer
 * 503 in their API's shape or succeed; none answers 500, leaks driver text or hangs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmbeddedServer } from '../../src/db/embedded.js';
import { pidAlive } from '../../src/db/pid.js';
import type { RunningPlatform } from '../../src/server.js';
import { startStandalonePlatform } from '../support/platform.js';
import {
  type Answer,
  api,
  expectNoDriverInternals,
  expectUnavailable,
  type Target,
} from './lifecycle-support.js';
import { seedKeptData } from '../support/lifecycle-seed.js';
import { eventually } from '../support/eventually.js';

const dir = mkdtempSync(join(tmpdir(), 'strata-dbdeath-'));
const notices: string[] = [];
let running: RunningPlatform | undefined;
let embedded: EmbeddedServer;
let target: Target;

beforeAll(async () => {
  running = await startStandalonePlatform(
    { dataDir: dir, dbPort: 0, databaseUrl: undefined },
    { notice: (l) => notices.push(l) },
  );
  const primary = running.platform.servers.primary.embedded;
  if (!primary) throw new Error('expected an embedded server');
  embedded = primary;
  target = await seedKeptData(running);
}, 300_000);

afterAll(async () => {
  await running?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Either a success or the API's 503 (the server may come back while the request runs). */
function okOrUnavailable(kind: 'graphql' | 'storage' | 'management', a: Answer): void {
  expectNoDriverInternals(a);
  if (a.status !== 200) expectUnavailable(kind, a);
}

async function killAndRecover(round: number): Promise<void> {
  const pid = embedded.pid;
  expect(pid).toBeTypeOf('number');
  process.kill(pid as number, 'SIGKILL');

  const down = await eventually(
    async () => {
      const a = await api.health(target);
      return a.status === 503 && a;
    },
    { timeoutMs: 5_000, intervalMs: 20 },
  );
  expectUnavailable('platform', down);
  // Meanwhile: 503 in each API's shape, or success once the supervisor has it back.
  const during = await Promise.all([
    api.graphql(target),
    api.storageBucket(target, 'kept'),
    api.management(target),
  ]);
  okOrUnavailable('graphql', during[0]);
  okOrUnavailable('storage', during[1]);
  okOrUnavailable('management', during[2]);

  const up = await eventually(
    async () => {
      const a = await api.health(target);
      return a.status === 200 && a;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  expect(up.status, up.text).toBe(200);
  expect(pidAlive(pid as number)).toBe(false);
  expect(embedded.pid).not.toBe(pid);
  expect(embedded.restarts).toBe(round);
  expect(notices.some((l) => l.includes(`PostgreSQL (pid ${pid}) exited unexpectedly`))).toBe(true);
  expect(notices.some((l) => /PostgreSQL restarted/.test(l))).toBe(true);

  // The same client (fetch's keep-alive agent) and Strata process: the next requests succeed.
  const g = await api.graphql(target);
  expect(g.status, g.text).toBe(200);
  expect(g.body).toEqual({ data: { notesCollection: { edges: [{ node: { body: 'kept' } }] } } });
  const b = await api.storageBucket(target, 'kept');
  expect(b.status, b.text).toBe(200);
  const m = await api.management(target);
  expect(m.status, m.text).toBe(200);
  expect((await api.storageHealth(target)).body).toEqual({ healthy: true });
}

describe('the embedded PostgreSQL dies under a running platform', () => {
  it('is noticed (503), restarted by the supervisor, and service resumes', async () => {
    expect((await api.health(target)).status).toBe(200);
    await killAndRecover(1);
  }, 180_000);

  it('is supervised again after a restart', async () => {
    await killAndRecover(2);
    const project = await (running as RunningPlatform).platform.defaultProject();
    expect(project.pool.totalCount - project.pool.idleCount).toBe(0);
  }, 180_000);
});
