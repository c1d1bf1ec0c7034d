/**
 * Change streams (`<type>Changes`) with real clients against a running platform following logical
 * replication: two users under RLS (inserts, updates that move a row out of and back into view,
 * deletes: neither ever gets the other's rows), a filter, a composite primary key, resuming after
 * a reconnect, refused cursors and hostile input, token expiry, graphql-sse and urql.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient as createSseClient } from 'graphql-sse';
import type { Client } from 'graphql-ws';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { eventually } from '../support/eventually.js';
import { graphqlUrl, postGraphQL } from '../support/graphql.js';
import type { TestPlatform } from '../support/platform.js';
import {
  SCHEMA,
  sleep,
  sql,
  startRealtimePlatform,
  subscribe,
  userToken,
  wsClient,
  wsUrl,
  type Json,
  type Stream,
  urqlOver,
} from './support.js';

let tp: TestPlatform;
let project: ProjectContext;
const clients: Client[] = [];

const CHANGES = 'subscription { noteChanges { op nodeId cursor record { id owner body } } }';

beforeAll(async () => {
  ({ tp, project } = await startRealtimePlatform({ replication: true }));
  await sql(
    project,
    `create table public.pair (a int, b text, owner text not null, note text, primary key (a, b));
     alter table public.pair enable row level security;
     create policy own on public.pair for all to authenticated
       using (owner = current_setting('request.jwt.claims', true)::json->>'sub');
     grant select, insert, update, delete on public.pair to authenticated;`,
  );
});

// Each test's streams are gone before the next counts its own.
afterEach(async () => {
  await eventually(() => tp.realtime.changeStreams() === 0, { timeoutMs: 10_000, intervalMs: 20 });
});

afterAll(async () => {
  for (const c of clients) await c.dispose();
  await tp?.close();
});

async function as(sub: string, expiresInSeconds = 3600): Promise<Client> {
  const token = await userToken(project, sub, expiresInSeconds);
  const c = wsClient(wsUrl(tp), { apikey: project.anonKey, Authorization: `Bearer ${token}` });
  clients.push(c);
  return c;
}

/** The events of a stream (each `next`'s one field). */
function events(s: Stream, field = 'noteChanges'): Json[] {
  return s.results.map((r) => r.data?.[field]);
}

/** Subscribes and waits until the server holds `n` more change streams than before. */
async function open(c: Client, query: string, variables?: Record<string, unknown>): Promise<Stream> {
  const before = tp.realtime.changeStreams();
  const s = subscribe(c, query, variables);
  await eventually(() => tp.realtime.changeStreams() > before || s.error !== undefined, {
    timeoutMs: 20_000,
    intervalMs: 20,
  });
  if (s.error) throw new Error(`subscribe failed: ${JSON.stringify(s.error)}`);
  return s;
}

const byBody = (body: string) => (r: Json) =>
  Object.values(r.data ?? {}).some((e: Json) => e?.record?.body === body);

describe('change streams under RLS (graphql-ws)', () => {
  it('two users: inserts, a row moved from alice to bob and back, deletes; neither sees the other', async () => {
    const alice = await open(await as('alice'), CHANGES);
    const bob = await open(await as('bob'), CHANGES);
    await sql(project, `insert into public.note (owner, body) values ('alice', 'a2')`);
    await sql(project, `insert into public.note (owner, body) values ('bob', 'b2')`);
    const a2 = (await alice.until(byBody('a2'))).data.noteChanges;
    const b2 = (await bob.until(byBody('b2'))).data.noteChanges;
    expect(a2).toMatchObject({ op: 'INSERT', record: { owner: 'alice', body: 'a2' } });
    expect(b2).toMatchObject({ op: 'INSERT', record: { owner: 'bob', body: 'b2' } });
    // The engine's own node id.
    expect(JSON.parse(Buffer.from(a2.nodeId, 'base64').toString())).toEqual(['public', 'note', a2.record.id]);

    // a2 moves to bob: alice is told it left her view (record null), bob gets it.
    await sql(project, `update public.note set owner = 'bob' where body = 'a2'`);
    await eventually(() => events(alice).some((e) => e.op === 'UPDATE' && e.nodeId === a2.nodeId), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect(events(alice).find((e) => e.op === 'UPDATE')).toMatchObject({ record: null, nodeId: a2.nodeId });
    const moved = (await bob.until((r) => r.data.noteChanges.op === 'UPDATE')).data.noteChanges;
    expect(moved).toMatchObject({ nodeId: a2.nodeId, record: { owner: 'bob', body: 'a2' } });

    // And back.
    await sql(project, `update public.note set owner = 'alice' where body = 'a2'`);
    await alice.until(
      (r) => r.data.noteChanges.op === 'UPDATE' && r.data.noteChanges.record?.owner === 'alice',
    );
    await eventually(() => events(bob).filter((e) => e.op === 'UPDATE').length === 2, {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect(events(bob).filter((e) => e.op === 'UPDATE')[1]).toMatchObject({
      nodeId: a2.nodeId,
      record: null,
    });

    // Deletes reach whoever was delivered the row; a row never delivered to alice ("alice 1",
    // there before she subscribed) is not announced until she has seen it.
    await sql(project, `delete from public.note where body in ('a2', 'b2', 'alice 1')`);
    await alice.until((r) => r.data.noteChanges.op === 'DELETE');
    await bob.until((r) => r.data.noteChanges.op === 'DELETE');
    await sleep(300);
    const aliceEvents = events(alice);
    const bobEvents = events(bob);
    expect(aliceEvents.map((e) => e.op)).toEqual(['INSERT', 'UPDATE', 'UPDATE', 'DELETE']);
    expect(aliceEvents[3]).toMatchObject({ nodeId: a2.nodeId, record: null });
    expect(bobEvents.map((e) => e.op)).toEqual(['INSERT', 'UPDATE', 'UPDATE', 'DELETE']);
    expect(bobEvents[3]).toMatchObject({ nodeId: b2.nodeId, record: null });
    // Neither ever received a record of the other's.
    for (const e of aliceEvents) if (e.record) expect(e.record.owner).toBe('alice');
    for (const e of bobEvents) if (e.record) expect(e.record.owner).toBe('bob');
    expect(bobEvents.some((e) => e.nodeId === b2.nodeId && e.op === 'DELETE')).toBe(true);
    // Cursors increase.
    const cursors = aliceEvents.map((e) => e.cursor);
    expect(new Set(cursors).size).toBe(cursors.length);
    alice.stop();
    bob.stop();
  });

  it('a filter: only matching rows; a row that stops matching is an UPDATE with a null record', async () => {
    const s = await open(
      await as('carol'),
      'subscription ($f: NoteFilter) { notes: noteChanges(filter: $f) { op record { body } } }',
      { f: { body: { startsWith: 'f' } } },
    );
    await sql(
      project,
      `insert into public.note (owner, body) values ('carol', 'g1'), ('carol', 'f1'), ('alice', 'f-not-carol')`,
    );
    await s.until((r) => r.data.notes.record?.body === 'f1');
    await sql(project, `update public.note set body = 'g2' where body = 'f1'`);
    await s.until((r) => r.data.notes.op === 'UPDATE');
    expect(s.results.map((r) => r.data.notes)).toEqual([
      { op: 'INSERT', record: { body: 'f1' } },
      { op: 'UPDATE', record: null },
    ]);
    s.stop();
  });

  it('two subscriptions of one user with different selections: each its own shape', async () => {
    const c = await as('kim');
    const a = await open(c, 'subscription { noteChanges { op } }');
    const b = await open(c, 'subscription { changes: noteChanges { kind: op record { body } __typename } }');
    await sql(project, `insert into public.note (owner, body) values ('kim', 'k1')`);
    await a.until((r) => r.data.noteChanges.op === 'INSERT');
    await b.until((r) => r.data.changes.record?.body === 'k1');
    expect(a.results).toEqual([{ data: { noteChanges: { op: 'INSERT' } } }]);
    expect(b.results).toEqual([
      { data: { changes: { kind: 'INSERT', record: { body: 'k1' }, __typename: 'NoteChange' } } },
    ]);
    a.stop();
    b.stop();
  });

  it('a transaction of 2,000 rows: every event, in order (fetched 30 keys per field, 50 fields per request)', async () => {
    const s = await open(await as('lena'), 'subscription { noteChanges { op record { body } } }');
    await sql(
      project,
      `insert into public.note (owner, body) select case when i % 2 = 0 then 'lena' else 'max' end, 'bulk ' || i
         from generate_series(1, 4000) i`,
    );
    await eventually(() => s.results.length >= 2000 || s.error !== undefined, {
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    expect(s.error).toBeUndefined();
    expect(s.results.map((r) => r.data.noteChanges.record.body)).toEqual(
      Array.from({ length: 2000 }, (_, i) => `bulk ${2 * (i + 1)}`),
    );
    s.stop();
  });

  it('a composite primary key', async () => {
    const q = 'subscription { pairChanges { op nodeId record { a b note } } }';
    const s = await open(await as('dora'), q);
    await sql(project, `insert into public.pair values (1, 'x y', 'dora', 'one'), (1, 'z', 'erin', 'no')`);
    const ins = (await s.until((r) => r.data.pairChanges.op === 'INSERT')).data.pairChanges;
    expect(ins).toMatchObject({ record: { a: 1, b: 'x y', note: 'one' } });
    expect(JSON.parse(Buffer.from(ins.nodeId, 'base64').toString())).toEqual(['public', 'pair', 1, 'x y']);
    await sql(project, `update public.pair set note = 'two' where a = 1`);
    await s.until((r) => r.data.pairChanges.record?.note === 'two');
    await sql(project, `delete from public.pair`);
    await s.until((r) => r.data.pairChanges.op === 'DELETE');
    await sleep(200);
    expect(s.results.map((r) => r.data.pairChanges.op)).toEqual(['INSERT', 'UPDATE', 'DELETE']);
    for (const r of s.results) expect(r.data.pairChanges.record?.note).not.toBe('no');

    // A TRUNCATE cannot be streamed row by row: the stream ends, saying so.
    await sql(project, `insert into public.pair values (2, 'y', 'dora', 'three')`);
    await s.until((r) => r.data.pairChanges.record?.note === 'three');
    await sql(project, 'truncate public.pair');
    await eventually(() => s.error !== undefined, { timeoutMs: 10_000, intervalMs: 20 });
    expect(JSON.stringify(s.error)).toMatch(/change set was too large/);
  });
});

describe('resuming', () => {
  it('after a reconnect, with a fresh token: the changes in between once each, then live', async () => {
    const first = await as('fred');
    const s1 = await open(first, CHANGES);
    await sql(project, `insert into public.note (owner, body) values ('fred', 'r1'), ('fred', 'r0')`);
    await s1.until(byBody('r0'));
    const seen = events(s1);
    const r1 = seen.find((e) => e.record.body === 'r1');
    const cursor = seen.at(-1).cursor;
    s1.stop();
    await first.dispose();
    await eventually(() => tp.realtime.changeStreams() === 0, { timeoutMs: 10_000, intervalMs: 20 });

    // While fred is away: a new row, r1 changed, r0... deleted (he had seen it).
    await sql(project, `insert into public.note (owner, body) values ('fred', 'r2')`);
    await sql(project, `update public.note set body = 'r1 changed' where body = 'r1'`);
    await sql(project, `delete from public.note where body = 'r0'`);
    await sql(project, `insert into public.note (owner, body) values ('bob', 'not fred')`);
    await sleep(200);

    const s2 = await open(
      await as('fred'),
      'subscription ($after: String) { noteChanges(after: $after) { op nodeId cursor record { id owner body } } }',
      { after: cursor },
    );
    await s2.until((r) => r.data.noteChanges.op === 'DELETE');
    expect(events(s2).map((e) => [e.op, e.record?.body ?? null])).toEqual([
      ['INSERT', 'r2'],
      ['UPDATE', 'r1 changed'],
      ['DELETE', null],
    ]);
    expect(events(s2)[1].nodeId).toBe(r1.nodeId);
    // Then live.
    await sql(project, `insert into public.note (owner, body) values ('fred', 'r3')`);
    await s2.until(byBody('r3'));
    await sleep(200);
    const bodies = events(s2).map((e) => e.record?.body ?? null);
    expect(bodies).toEqual(['r2', 'r1 changed', null, 'r3']);
    const cursors = events(s2).map((e) => e.cursor);
    expect(new Set([cursor, ...cursors]).size).toBe(cursors.length + 1);
    s2.stop();
  });

  it('a cursor that is malformed, huge or not a string ends the subscribe with a clear error', async () => {
    const c = await as('gina');
    const q = 'subscription ($after: String) { noteChanges(after: $after) { op } }';
    for (const after of [
      'nope',
      'x'.repeat(100_000),
      Buffer.from('AAAAAAAA.ffffffffffffffff.1').toString('base64url'),
    ]) {
      const s = subscribe(c, q, { after });
      await eventually(() => s.error !== undefined, { timeoutMs: 10_000, intervalMs: 20 });
      expect(JSON.stringify(s.error)).toMatch(/The cursor is too old/);
    }
    const notString = subscribe(c, 'subscription { noteChanges(after: 5) { op } }');
    await eventually(() => notString.error !== undefined, { timeoutMs: 10_000, intervalMs: 20 });
    expect(JSON.stringify(notString.error)).toMatch(/Invalid input for String type/);
  });
});

describe('hostile input and limits', () => {
  it('refuses a filter of the wrong type, unknown fields and arguments, reserved names', async () => {
    const c = await as('hana');
    const cases: [string, RegExp][] = [
      ['subscription { noteChanges(filter: {id: {eq: "x"}}) { op } }', /Int/],
      ['subscription { noteChanges(filter: {nope: {eq: 1}}) { op } }', /extra keys/],
      ['subscription { noteChanges(first: 1) { op } }', /Unknown argument "first"/],
      ['subscription { noteChanges { op secret } }', /Unknown field "secret" on type NoteChange/],
      ['subscription { noteChanges { record { nope } } }', /nope/],
      ['subscription { noteChanges }', /must have a selection/],
      ['subscription { noteChanges { record { _strataNodeId: id } } }', /reserved/],
      ['subscription { noteChanges { ...F } } fragment F on Note { id }', /cannot be spread/],
    ];
    for (const [query, error] of cases) {
      const s = subscribe(c, query);
      await eventually(() => s.error !== undefined || s.results.length > 0, {
        timeoutMs: 10_000,
        intervalMs: 20,
      });
      const message = Array.isArray(s.error)
        ? s.error.map((e: Json) => e.message).join('; ')
        : String(s.error);
      expect(message, query).toMatch(error);
    }
    expect(tp.realtime.changeStreams()).toBe(0);
  });

  it('ends with JWT expired when the token expires', async () => {
    const s = await open(await as('ivy', 2), CHANGES);
    await eventually(() => s.error !== undefined, { timeoutMs: 8_000, intervalMs: 20 });
    expect(JSON.stringify(s.error)).toMatch(/JWT expired/);
  });
});

describe('other clients', () => {
  it('graphql-sse: alice gets her inserts only', async () => {
    const token = await userToken(project, 'alice');
    const c = createSseClient({
      url: `${tp.url}/graphql/v1`,
      singleConnection: false,
      headers: { apikey: project.anonKey, authorization: `Bearer ${token}` },
      retryAttempts: 0,
    });
    const got: Json[] = [];
    let error: unknown;
    const before = tp.realtime.changeStreams();
    const stop = c.subscribe(
      { query: CHANGES },
      {
        next: (r) => void got.push(r),
        error: (e) => {
          error = e;
        },
        complete: () => {},
      },
    );
    await eventually(() => tp.realtime.changeStreams() > before || error !== undefined, {
      timeoutMs: 20_000,
      intervalMs: 20,
    });
    await sql(
      project,
      `insert into public.note (owner, body) values ('bob', 'sse bob'), ('alice', 'sse alice')`,
    );
    await eventually(() => got.some(byBody('sse alice')), { timeoutMs: 10_000, intervalMs: 20 });
    await sleep(200);
    expect(got.map((r) => r.data.noteChanges.record.body)).toEqual(['sse alice']);
    stop();
    c.dispose();
  });

  it('urql over graphql-ws', async () => {
    const ws = await as('jack');
    const urql = urqlOver(ws, `${tp.url}/graphql/v1`, project.anonKey);
    const seen: Json[] = [];
    const before = tp.realtime.changeStreams();
    const sub = urql
      .subscription('subscription { noteChanges { op record { body } } }', {})
      .subscribe((r) => seen.push(r));
    await eventually(() => tp.realtime.changeStreams() > before || seen.length > 0, {
      timeoutMs: 20_000,
      intervalMs: 20,
    });
    expect(seen).toEqual([]);
    await sql(project, `insert into public.note (owner, body) values ('jack', 'urql 1')`);
    await eventually(() => seen.length >= 1, { timeoutMs: 10_000, intervalMs: 20 });
    expect(seen[0].error).toBeUndefined();
    expect(seen[0].data.noteChanges).toMatchObject({ op: 'INSERT', record: { body: 'urql 1' } });
    sub.unsubscribe();
  });
});

describe('the project', () => {
  it('deleted while a change stream is open (and lingering for resumes): the stream ends saying why', async () => {
    const other = await tp.platform.createProject({ name: 'short-lived', organizationId: 'default-org' });
    await sql(other, SCHEMA);
    const token = await userToken(other, 'alice');
    const c = wsClient(wsUrl(tp, `/project/${other.ref}`), {
      apikey: other.anonKey,
      Authorization: `Bearer ${token}`,
    });
    clients.push(c);
    const s = await open(c, CHANGES);
    await sql(other, `insert into public.note (owner, body) values ('alice', 'doomed')`);
    await s.until(byBody('doomed'));
    await expect(tp.platform.deleteProject(other.ref)).resolves.toBe(true);
    await eventually(() => s.error !== undefined, { timeoutMs: 10_000, intervalMs: 20 });
    expect(s.error[0].message).toMatch(/^The project's database connection was closed/);
  });
});

describe('the schema', () => {
  it('has <type>Changes(filter, after): <Type>Change! with op, record, nodeId, cursor', async () => {
    const r = await postGraphQL(
      graphqlUrl(tp, project.ref),
      {
        query: `{ s: __type(name: "Subscription") { fields { name args { name type { name kind } } type { kind ofType { name } } } }
          c: __type(name: "NoteChange") { fields { name type { kind name ofType { name } } } }
          o: __type(name: "ChangeOp") { enumValues { name } } }`,
      },
      { apikey: project.anonKey },
    );
    const d = r.json.data;
    const f = d.s.fields.find((x: Json) => x.name === 'noteChanges');
    expect(f.args.map((a: Json) => [a.name, a.type.name])).toEqual([
      ['filter', 'NoteFilter'],
      ['after', 'String'],
    ]);
    expect(f.type).toEqual({ kind: 'NON_NULL', ofType: { name: 'NoteChange' } });
    expect(d.s.fields.some((x: Json) => x.name === 'pairChanges')).toBe(true);
    expect(d.c.fields.map((x: Json) => [x.name, x.type.kind, x.type.name ?? x.type.ofType?.name])).toEqual([
      ['op', 'NON_NULL', 'ChangeOp'],
      ['record', 'OBJECT', 'Note'],
      ['nodeId', 'NON_NULL', 'ID'],
      ['cursor', 'NON_NULL', 'String'],
    ]);
    expect(d.o.enumValues.map((v: Json) => v.name)).toEqual(['INSERT', 'UPDATE', 'DELETE']);
  });
});
