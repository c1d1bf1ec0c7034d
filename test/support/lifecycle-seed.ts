/**
 * What the lifecycle tests expect to survive an outage: the default project of a running platform
 * gets a table `notes` (one row, 'kept') the API roles may read, and a bucket `kept`.
 */
import { expect } from 'vitest';
import pg from 'pg';
import type { RunningPlatform } from '../../src/server.js';
import { api, type Target } from '../hardening/lifecycle-support.js';

/** Seeds the default project and returns how to reach it (URL, service key, access token). */
export async function seedKeptData(running: RunningPlatform): Promise<Target> {
  const project = await running.platform.defaultProject();
  const c = new pg.Client({ connectionString: project.superuserUrl });
  await c.connect();
  try {
    await c.query(`create table public.notes (id int primary key, body text);
      insert into public.notes values (1, 'kept');
      grant all on public.notes to anon, authenticated, service_role;`);
  } finally {
    await c.end();
  }
  const target = {
    url: running.url,
    serviceKey: project.serviceRoleKey,
    accessToken: running.platform.defaultAccessToken,
  };
  expect((await api.createBucket(target, 'kept')).status).toBe(200);
  return target;
}
