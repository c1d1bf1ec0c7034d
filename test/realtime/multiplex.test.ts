/**
 * Live queries at scale and through other clients: 1,000 subscribers sharing one statement per
 * refresh, urql over graphql-ws, and a schema without the switch (no Subscription type at all).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'graphql-ws';
import type { ProjectContext } from '../../src/platform/project-context.js';
import type { TestPlatform } from '../support/platform.js';
import {
  bodies,
  NOTES,
  sleep,
  sql,
  startRealtimePlatform,
  subscribe,
  wsClient,
  wsUrl,
  type Json,
  type Stream,
  urqlOver,
} from './support.js';
import { eventually } from '../support/eventually.js';
import { graphqlUrl, postGraphQL } from '../support/graphql.js';

let tp: TestPlatform;
let project: ProjectContext;
const clients: Client[] = [];

function client(params: Record<string, unknown>, url = wsUrl(tp)): Client {
  const c = wsClient(url, params);
  clients.push(c);
  return c;
}

beforeAll(async () => {
  ({ tp, project } = await startRealtimePlatform({ intervalMs: 200, replication: false }));
});

afterAll(async () => {
  for (const c of clients) await c.dispose();
  await tp?.close();
});

async function introspect(p: ProjectContext, query: string): Promise<Json> {
  return (await postGraphQL(graphqlUrl(tp, p.ref), { query }, { apikey: p.anonKey })).json;
}

describe('multiplexing', () => {
  it('1,000 concurrent subscribers with the same document and claims share one statement per refresh', async () => {
    const before = tp.realtime.stats();
    const streams: Stream[] = [];
    for (let i = 0; i < 20; i++) {
      const c = client({ apikey: project.anonKey });
      for (let j = 0; j < 50; j++) streams.push(subscribe(c, NOTES));
    }
    await eventually(() => streams.every((s) => s.results.length >= 1), {
      timeoutMs: 30_000,
      intervalMs: 20,
    }).catch((e) => {
      const got = streams.filter((s) => s.results.length).length;
      throw new Error(
        `${e.message}: ${got} of 1000 got a result; errors: ${JSON.stringify(streams.find((s) => s.error)?.error)}; ${JSON.stringify(tp.realtime.stats())}`,
      );
    });
    expect(tp.realtime.stats()).toMatchObject({ groups: 1, subscribers: 1000, feeds: 0 });
    for (const s of streams) expect(bodies(s.results[0])).toEqual(['alice 1', 'bob 1']);

    // One write: every subscriber gets the new result once.
    await sql(project, `insert into public.note (owner, body) values ('carol', 'carol 1')`);
    await eventually(() => streams.every((s) => s.results.length >= 2), {
      timeoutMs: 30_000,
      intervalMs: 20,
    });
    for (const s of streams) expect(bodies(s.results[1])).toEqual(['alice 1', 'bob 1', 'carol 1']);

    // Over ~10 refreshes the statement ran about once per refresh, not once per subscriber.
    const start = tp.realtime.stats().executions;
    await sleep(2_000);
    const ran = tp.realtime.stats().executions - start;
    expect(ran).toBeGreaterThanOrEqual(5);
    expect(ran).toBeLessThanOrEqual(12);
    expect(tp.realtime.stats().executions - before.executions).toBeLessThan(50);
    // Nothing changed in those refreshes: nothing more was pushed.
    for (const s of streams) expect(s.results).toHaveLength(2);

    for (const s of streams) s.stop();
    await eventually(() => tp.realtime.stats().subscribers === 0, { timeoutMs: 10_000, intervalMs: 20 });
    expect(tp.realtime.stats().groups).toBe(0);
  });

  it('urql (subscriptionExchange over graphql-ws) receives live results', async () => {
    const ws = client({ apikey: project.anonKey });
    const urql = urqlOver(ws, `${tp.url}/graphql/v1`, project.anonKey);
    const seen: Json[] = [];
    const sub = urql
      .subscription(
        'subscription { noteCollection(filter: {owner: {eq: "dave"}}) { edges { node { body } } } }',
        {},
      )
      .subscribe((r) => seen.push(r));
    await eventually(() => seen.length >= 1, { timeoutMs: 10_000, intervalMs: 20 });
    expect(seen[0].error).toBeUndefined();
    expect(seen[0].data.noteCollection.edges).toEqual([]);
    await sql(project, `insert into public.note (owner, body) values ('dave', 'dave 1')`);
    await eventually(() => seen.length >= 2, { timeoutMs: 10_000, intervalMs: 20 });
    expect(seen[1].data.noteCollection.edges.map((e: Json) => e.node.body)).toEqual(['dave 1']);
    sub.unsubscribe();
  });
});

describe('the switch', () => {
  it('Subscription fields are the Query fields of the same name: same arguments, same types', async () => {
    const field = '{ name args { name defaultValue type { ...T } } type { ...T } }';
    const T =
      'fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }';
    const r = await introspect(
      project,
      `{ __schema { subscriptionType { name } } q: __type(name: "Query") { fields ${field} } s: __type(name: "Subscription") { fields ${field} } } ${T}`,
    );
    expect(r.data.__schema.subscriptionType).toEqual({ name: 'Subscription' });
    const names = r.data.s.fields.map((f: Json) => f.name);
    // Plus the table's change stream (test/realtime/change-streams.test.ts).
    expect(names).toEqual(['noteByPk', 'noteChanges', 'noteCollection']);
    for (const f of r.data.s.fields)
      if (f.name !== 'noteChanges') expect(f).toEqual(r.data.q.fields.find((q: Json) => q.name === f.name));
  });

  it('a change stream needs logical replication: with it off, subscribing is refused', async () => {
    const s = subscribe(client({ apikey: project.anonKey }), 'subscription { noteChanges { op } }');
    await eventually(() => s.error !== undefined, { timeoutMs: 10_000, intervalMs: 20 });
    expect(s.error[0].message).toMatch(/^Change streams need the database's change feed/);
  });

  it('a schema without the switch has no Subscription type, and subscribing is refused', async () => {
    const plain = await tp.platform.createProject({ name: 'plain', organizationId: 'default-org' });
    await sql(
      plain,
      `comment on schema public is '@graphql({"introspection": true})';
       create table public.note (id serial primary key, body text not null);
       grant select on public.note to anon;`,
    );
    const r = await introspect(
      plain,
      '{ __schema { subscriptionType { name } } s: __type(name: "Subscription") { name } }',
    );
    expect(r.data).toEqual({ __schema: { subscriptionType: null }, s: null });
    const s = subscribe(
      client({ apikey: plain.anonKey }, wsUrl(tp, `/project/${plain.ref}`)),
      'subscription { noteCollection { edges { node { id } } } }',
    );
    await eventually(() => s.error !== undefined, { timeoutMs: 10_000, intervalMs: 20 });
    expect(s.error[0].message).toMatch(/^Unknown type Subscription/);
  });
});
