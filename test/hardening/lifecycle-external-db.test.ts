/**
 * An external DATABASE_URL that goes away and comes back: a second PostgreSQL started and
 * stopped by this test (not the run's shared server). While it is down, health endpoints and
 * every API answer 503 in their own error shape (never driver text, never a hang); once it is
 * back, the same client's next requests succeed without restarting Strata.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbedded, type EmbeddedServer } from '../../src/db/embedded.js';
import type { RunningPlatform } from '../../src/server.js';
import { startStandalonePlatform } from '../support/platform.js';
import { api, expectUnavailable, type Target } from './lifecycle-support.js';
import { seedKeptData } from '../support/lifecycle-seed.js';
import { eventually } from '../support/eventually.js';

const dir = mkdtempSync(join(tmpdir(), 'strata-extdb-'));
const dbDir = join(dir, 'pg');
let server: EmbeddedServer | undefined;
let running: RunningPlatform | undefined;
let target: Target;
let port = 0;
let coldRef = '';
let coldKey = '';

const startServer = async () =>
  startEmbedded({ dataDir: dbDir, port, password: 'ext-secret' }).then((s) => {
    port = s.port;
    return s;
  });

beforeAll(async () => {
  server = await startServer();
  running = await startStandalonePlatform(
    { dataDir: join(dir, 'data'), databaseUrl: server.superuserUrl() },
    { notice: () => {} },
  );
  target = await seedKeptData(running);
  // A second project whose context is not loaded when the database goes away.
  const other = await running.platform.createProject({ name: 'cold', organizationId: 'default-org' });
  coldRef = other.ref;
  coldKey = other.serviceRoleKey;
  await running.platform.forget(coldRef);
}, 300_000);

afterAll(async () => {
  await running?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('an external database that goes away and comes back', () => {
  it('answers normally while the database is up', async () => {
    expect((await api.health(target)).status).toBe(200);
    expect((await api.storageHealth(target)).body).toEqual({ healthy: true });
    const g = await api.graphql(target);
    expect(g.body).toEqual({ data: { notesCollection: { edges: [{ node: { body: 'kept' } }] } } });
    expect((await api.storageBucket(target, 'kept')).status).toBe(200);
    expect((await api.management(target)).status).toBe(200);
  }, 180_000);

  it('answers 503 in each API shape while it is down', async () => {
    await server?.stop();
    server = undefined;
    const health = await eventually(
      async () => {
        const a = await api.health(target);
        return a.status === 503 && a;
      },
      { timeoutMs: 10_000 },
    );
    expectUnavailable('platform', health);
    expect(health.body).toMatchObject({ status: 'unavailable', database: 'down' });
    expectUnavailable('storage', await api.storageHealth(target));
    expectUnavailable('graphql', await api.graphql(target));
    expectUnavailable('storage', await api.storageBucket(target, 'kept'));
    expectUnavailable('management', await api.management(target));
    // A project not loaded yet: the lookup itself fails, and is answered in each API's shape too.
    const cold = { ...target, url: `${target.url}/project/${coldRef}`, serviceKey: coldKey };
    expectUnavailable('graphql', await api.graphql(cold));
    expectUnavailable('storage', await api.storageBucket(cold, 'kept'));
    expectUnavailable('platform', await api.health(cold));
    // Hostile-ish: many at once, none hangs or answers 500.
    const many = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        i % 3 === 0
          ? api.graphql(target)
          : i % 3 === 1
            ? api.storageBucket(target, 'kept')
            : api.management(target),
      ),
    );
    for (const a of many) expect(a.status, a.text).toBe(503);
  }, 180_000);

  it('resumes by itself once the database is back, with caches and data intact', async () => {
    server = await startServer();
    const health = await eventually(
      async () => {
        const a = await api.health(target);
        return a.status === 200 && a;
      },
      { timeoutMs: 15_000 },
    );
    expect(health.status).toBe(200);
    // The pools dropped their dead clients: the first requests after the outage succeed.
    const g = await api.graphql(target);
    expect(g.status, g.text).toBe(200);
    expect(g.body).toEqual({ data: { notesCollection: { edges: [{ node: { body: 'kept' } }] } } });
    const b = await api.storageBucket(target, 'kept');
    expect(b.status, b.text).toBe(200);
    const m = await api.management(target);
    expect(m.status, m.text).toBe(200);
    expect((await api.storageHealth(target)).body).toEqual({ healthy: true });
    // The project whose lookup failed during the outage is loaded now.
    const cold = { ...target, url: `${target.url}/project/${coldRef}`, serviceKey: coldKey };
    const c = await api.graphql(cold, '{ __typename }');
    expect(c.status, c.text).toBe(200);
    // No client is left checked out of the project's pool.
    const project = await (running as RunningPlatform).platform.defaultProject();
    expect(project.pool.totalCount - project.pool.idleCount).toBe(0);
  }, 180_000);
});
