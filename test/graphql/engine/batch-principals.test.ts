/**
 * resolveBatchesWithPoolText: several principals' batches (realtime's groups of differing claims)
 * in one round trip, each its own transaction, every answer byte-identical to the request's alone;
 * nothing one principal's statements set reaches the next; a failing batch and one whose role has
 * no catalog yet are answered alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { SAMPLE_SCHEMA, ownedItems, setupEnv, type Env } from './harness.js';
import { recordingPool } from './wire-tap.js';
import { resolveBatchesWithPoolText, resolveWithPoolText } from '../../../src/graphql/engine.js';

let env: Env;
let pool: pg.Pool;
const sent: string[] = [];

beforeAll(async () => {
  env = await setupEnv(`${SAMPLE_SCHEMA}${ownedItems(12)}
    -- What an earlier transaction of the message set would show here (it must not).
    create function _marker(i item) returns text stable language sql as $$
      select coalesce(current_setting('app.marker', true), '') ||
             set_config('app.marker', 'seen by ' || (current_setting('request.jwt.claims', true)::jsonb ->> 'sub'), true) $$;
    create function _plan_mode(i item) returns text stable language sql as $$ select current_setting('plan_cache_mode') $$;
    create role batch_late nologin;
    grant batch_late to current_user;
    grant usage on schema public, graphql to batch_late;
    grant select on all tables in schema public to anon, authenticated, batch_late;
    grant execute on all functions in schema public to anon, authenticated, batch_late;
  `);
  pool = recordingPool(env.db.url, sent);
});
afterAll(async () => {
  await pool.end();
  await env.close();
});

type Principal = { role: string; claims: Record<string, unknown> };
const user = (sub: string): Principal => ({ role: 'authenticated', claims: { role: 'authenticated', sub } });
const anon: Principal = { role: 'anon', claims: { role: 'anon' } };

const ITEMS =
  'query Q($first: Int) { itemCollection(first: $first, orderBy: [{id: AscNullsLast}]) { edges { node { id name owner marker } } } }';

/** Runs `batches` and answers them with the round trips they took. */
async function joint(batches: { principal: Principal; sets: Record<string, unknown>[]; query?: string }[]) {
  const from = sent.length;
  const out = await resolveBatchesWithPoolText(
    pool,
    batches.map((b) => ({
      principal: b.principal,
      reqs: b.sets.map((variables) => ({ query: b.query ?? ITEMS, variables })),
    })),
  );
  return { out, messages: sent.length - from };
}

async function alone(principal: Principal, sets: Record<string, unknown>[], query = ITEMS) {
  const out: string[] = [];
  for (const variables of sets) out.push(await resolveWithPoolText(pool, principal, { query, variables }));
  return out;
}

describe('resolveBatchesWithPoolText', () => {
  it("three users' claims and anon in one round trip: each sees its rows, as alone, and no other's settings", async () => {
    const principals = [user('u0'), user('u1'), user('u2'), anon];
    // Warm: each role's catalog cached, the statement seen once.
    for (const p of principals) await alone(p, [{ first: 2 }]);
    const r = await joint(principals.map((principal) => ({ principal, sets: [{ first: 2 }] })));
    expect(r.messages).toBe(1);
    for (const [k, p] of principals.entries()) expect(r.out[k]).toEqual(await alone(p, [{ first: 2 }]));
    const u1 = JSON.parse(r.out[1]?.[0] as string);
    expect(u1.data.itemCollection.edges.map((e: { node: { owner: string } }) => e.node.owner)).toEqual([
      'u1',
      'u1',
    ]);
    // The first row's marker: nothing set before it in its own transaction.
    expect(u1.data.itemCollection.edges[0].node.marker).toBe('seen by u1');
    expect(JSON.parse(r.out[3]?.[0] as string).data.itemCollection.edges).toEqual([]);
  });

  it('batches of several variable sets each: one round trip, answers as their batch alone', async () => {
    const sets = [{ first: 1 }, { first: 3 }];
    const q =
      'query Q($first: Int) { itemCollection(first: $first, orderBy: [{id: DescNullsLast}]) { edges { node { id } } } }';
    await alone(user('u0'), sets, q);
    await alone(user('u2'), sets, q);
    const r = await joint([
      { principal: user('u0'), sets, query: q },
      { principal: user('u2'), sets, query: q },
    ]);
    expect(r.messages).toBe(1);
    expect(r.out).toEqual([await alone(user('u0'), sets, q), await alone(user('u2'), sets, q)]);
  });

  it('consecutive batches of one principal (the same object) share one transaction; answers as alone', async () => {
    const q =
      'query Q($first: Int) { itemCollection(first: $first, orderBy: [{id: DescNullsLast}]) { edges { node { id owner } } } }';
    const names = 'query N { itemCollection(first: 2) { edges { node { name } } } }';
    const u0 = user('u0');
    const u2 = user('u2');
    await alone(u0, [{}], names);
    await alone(u0, [{ first: 1 }], q);
    await alone(u2, [{ first: 1 }], q);
    const from = sent.length;
    const r = await joint([
      { principal: u0, sets: [{ first: 1 }, { first: 3 }], query: q },
      { principal: u0, sets: [{}], query: names },
      { principal: u2, sets: [{ first: 1 }], query: q },
      { principal: u0, sets: [{ first: 2 }], query: q },
    ]);
    expect(r.messages).toBe(1);
    // u0, u0 | u2 | u0: three transactions.
    expect(
      sent
        .slice(from)
        .join('\n')
        .match(/\bbegin\b/g),
    ).toHaveLength(3);
    expect(r.out).toEqual([
      await alone(u0, [{ first: 1 }, { first: 3 }], q),
      await alone(u0, [{}], names),
      await alone(u2, [{ first: 1 }], q),
      await alone(u0, [{ first: 2 }], q),
    ]);
  });

  it('genericPlans: the batches run with generic plans only, in the joint message and alone', async () => {
    const q = 'query Q($first: Int) { itemCollection(first: $first) { edges { node { planMode } } } }';
    const modes = (texts: string[][]) =>
      texts.flat().map((t) => JSON.parse(t).data.itemCollection.edges[0].node.planMode as string);
    const batches = [user('u0'), user('u1')].map((principal) => ({
      principal,
      reqs: [{ query: q, variables: { first: 1 } }],
    }));
    expect(modes(await resolveBatchesWithPoolText(pool, batches))).toEqual(['auto', 'auto']);
    expect(modes(await resolveBatchesWithPoolText(pool, batches, { genericPlans: true }))).toEqual([
      'force_generic_plan',
      'force_generic_plan',
    ]);
    // One batch goes alone (resolveBatchWithPoolText's path), with its two sets.
    const alone = await resolveBatchesWithPoolText(
      pool,
      [{ principal: user('u2'), reqs: [1, 2].map((first) => ({ query: q, variables: { first } })) }],
      { genericPlans: true },
    );
    expect(modes(alone)).toEqual(['force_generic_plan', 'force_generic_plan']);
  });

  it('a batch that fails and one whose role has no catalog yet: each answered as alone, the others too', async () => {
    const failing = '{ failNow }';
    await alone(anon, [{}], failing);
    await alone(user('u1'), [{ first: 1 }]);
    const late: Principal = { role: 'batch_late', claims: { role: 'batch_late' } };
    const r = await joint([
      { principal: anon, sets: [{}], query: failing },
      { principal: user('u1'), sets: [{ first: 1 }] },
      { principal: late, sets: [{ first: 1 }] },
    ]);
    expect(r.out[0]).toEqual(await alone(anon, [{}], failing));
    expect(JSON.parse(r.out[0]?.[0] as string).errors[0].message).toMatch(/division by zero/);
    expect(r.out[1]).toEqual(await alone(user('u1'), [{ first: 1 }]));
    expect(r.out[2]).toEqual(await alone(late, [{ first: 1 }]));
    // The joint message failed; then each batch alone (the late role loads its catalog first).
    expect(r.messages).toBeGreaterThanOrEqual(4);
  });
});
