/**
 * Worker slots (issue 29, item 4), written as a token holder with their own organization and
 * project: requests that wait idle (a function that sleeps) used to hold every worker slot, so
 * every other project's functions were answered 503 WORKER_LIMIT until they ended. A project may
 * use every slot while no one else needs one; when another project below its fair share (max
 * workers ÷ projects holding workers) needs a worker, the biggest holder gives one up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromEnv } from '../../src/config.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { api, createOtherUser } from '../support/management.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { deployOne, invokeFunction } from '../support/functions.js';
import { eventually } from '../support/eventually.js';

let tp: TestPlatform;
let victim: ProjectContext;
let hog: ProjectContext;
let hog2: ProjectContext;
const MAX_WORKERS = 4;

const HOLD = `Deno.serve(async () => { await new Promise((r) => setTimeout(r, 12_000)); return new Response('held'); });`;
const HELLO = `Deno.serve(() => new Response('hello'));`;

function stats() {
  return tp.functions.runtime.stats();
}

beforeAll(async () => {
  tp = await startTestPlatform({
    functions: {
      ...configFromEnv({}).functions,
      prewarm: false,
      maxWorkers: MAX_WORKERS,
      requestTimeoutMs: 30_000,
    },
  });
  victim = await tp.platform.defaultProject();
  expect((await deployOne(tp, victim.ref, 'hello', HELLO, { verify_jwt: false })).status).toBe(201);
  expect((await deployOne(tp, victim.ref, 'hello2', HELLO, { verify_jwt: false })).status).toBe(201);
  const other = await createOtherUser(tp, 'hog');
  const project = async (name: string) => {
    const created = await api(tp, 'POST', '/v1/projects', {
      token: other.token,
      body: { name, organization_slug: other.orgSlug, db_pass: `${name}-pass-1` },
    });
    expect(created.status, created.text).toBe(201);
    const ctx = await tp.platform.project(created.body.ref);
    if (!ctx) throw new Error('hog project not loaded');
    for (let i = 0; i < MAX_WORKERS; i++) {
      const d = await deployOne(tp, ctx.ref, `hold${i}`, HOLD, { verify_jwt: false, token: other.token });
      expect(d.status, JSON.stringify(d.body)).toBe(201);
    }
    return ctx;
  };
  hog = await project('hog');
  hog2 = await project('hog-two');
});

function hold(ref: string, i: number) {
  return invokeFunction(tp, ref, `hold${i}`).then(async (r) => ({
    status: r.status,
    code: r.headers.get('sb-error-code'),
    text: await r.text(),
  }));
}

afterAll(async () => {
  await tp?.close();
});

describe('one project cannot starve another of worker slots', () => {
  it('while one project holds every worker with idle-waiting requests, another still gets answered', async () => {
    // The hog fills every slot (allowed: nobody else needs one yet).
    const held = Array.from({ length: MAX_WORKERS }, (_, i) => hold(hog.ref, i));
    await eventually(() => stats().workers === MAX_WORKERS && stats().inflight === MAX_WORKERS, {
      timeoutMs: 20_000,
    });
    // The victim's functions are answered (they were 503 WORKER_LIMIT).
    const r = await invokeFunction(tp, victim.ref, 'hello');
    expect(r.status, await r.clone().text()).toBe(200);
    expect(await r.text()).toBe('hello');
    const r2 = await invokeFunction(tp, victim.ref, 'hello2');
    expect(r2.status, await r2.clone().text()).toBe(200);
    // The hog's held request that gave its worker up ends 503 WORKER_LIMIT (one: the victim's
    // second function took the victim's own idle worker's slot, idle ones going first); the others finish.
    const results = await Promise.all(held);
    const given = results.filter((x) => x.status === 503);
    expect(given.length).toBe(1);
    for (const g of given) expect(g.code).toBe('WORKER_LIMIT');
    expect(results.filter((x) => x.status === 200).length).toBe(MAX_WORKERS - 1);
    expect(stats().workers).toBeLessThanOrEqual(MAX_WORKERS);
  });

  it('nor can the same holder with two projects: each project counts once in the fair share', async () => {
    const runtime = tp.functions.runtime;
    for (const ref of [victim.ref, hog.ref, hog2.ref]) await runtime.stopProject(ref);
    expect(stats().workers).toBe(0);
    const held = [hold(hog.ref, 0), hold(hog.ref, 1), hold(hog2.ref, 0), hold(hog2.ref, 1)];
    await eventually(() => stats().workers === MAX_WORKERS && stats().inflight === MAX_WORKERS, {
      timeoutMs: 20_000,
    });
    const r = await invokeFunction(tp, victim.ref, 'hello');
    expect(r.status, await r.clone().text()).toBe(200);
    const results = await Promise.all(held);
    expect(results.filter((x) => x.status === 503).length).toBe(1);
    expect(results.filter((x) => x.status === 200).length).toBe(MAX_WORKERS - 1);
  });
});
