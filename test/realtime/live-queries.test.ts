/**
 * GraphQL subscriptions as live queries over graphql-ws (src/realtime/), against a running
 * platform: RLS as each subscriber, pushes only on change, token expiry, reconnect, limits.
 */
import { request } from 'node:http';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'graphql-ws';
import { createClient as createSseClient } from 'graphql-sse';
import type { ProjectContext } from '../../src/platform/project-context.js';
import type { TestPlatform } from '../support/platform.js';
import {
  bodies,
  NOTES,
  sleep,
  sql,
  startRealtimePlatform,
  subscribe,
  userToken,
  wsClient,
  wsUrl,
  type Json,
  type Stream,
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

/** The status a bare WebSocket upgrade request gets (101 when it is accepted). */
function upgradeStatus(url: string, localAddress?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      localAddress,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'sec-websocket-protocol': 'graphql-transport-ws',
      },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve(101);
    });
    req.on('error', reject);
    req.end();
  });
}

async function asUser(sub: string, expiresInSeconds?: number): Promise<Client> {
  return client({
    apikey: project.anonKey,
    Authorization: `Bearer ${await userToken(project, sub, expiresInSeconds)}`,
  });
}

beforeAll(async () => {
  ({ tp, project } = await startRealtimePlatform({ maxPerConnection: 5 }));
});

afterAll(async () => {
  for (const c of clients) await c.dispose();
  await tp?.close();
});

describe('live queries over graphql-ws', () => {
  it('two users under RLS: each gets only their rows, on insert, on an update that moves a row out of view, on delete', async () => {
    const alice = subscribe(await asUser('alice'), NOTES);
    const bob = subscribe(await asUser('bob'), NOTES);
    await alice.until((r) => bodies(r).join() === 'alice 1');
    await bob.until((r) => bodies(r).join() === 'bob 1');

    // Insert: Alice's row reaches Alice; Bob's result does not change, so Bob gets nothing.
    const bobSeen = bob.results.length;
    await sql(project, `insert into public.note (owner, body) values ('alice', 'alice 2')`);
    await alice.until((r) => bodies(r).join() === 'alice 1,alice 2');
    await sleep(400);
    expect(bob.results.length).toBe(bobSeen);

    // Update moving Alice's row to Bob: it leaves Alice's result and enters Bob's.
    const aliceSeen = alice.results.length;
    await sql(project, `update public.note set owner = 'bob', body = 'moved' where body = 'alice 2'`);
    await alice.until((r) => bodies(r).join() === 'alice 1', aliceSeen);
    await bob.until((r) => bodies(r).join() === 'bob 1,moved', bobSeen);

    // Delete.
    await sql(project, `delete from public.note where body = 'moved'`);
    await bob.until((r) => bodies(r).join() === 'bob 1', bobSeen + 1);

    // Never once did either receive a row of the other.
    for (const r of alice.results) for (const b of bodies(r)) expect(b).not.toMatch(/bob|moved/);
    for (const r of bob.results) for (const b of bodies(r)) expect(b).not.toMatch(/alice/);
    // Consecutive pushes always differ (nothing is pushed for a write that leaves the result as it was).
    for (const s of [alice, bob])
      for (let i = 1; i < s.results.length; i++)
        expect(JSON.stringify(s.results[i])).not.toBe(JSON.stringify(s.results[i - 1]));
    alice.stop();
    bob.stop();
  });

  it('ByPk fields are live too, with their arguments; a row the user cannot see is null', async () => {
    const c = await asUser('alice');
    const own = subscribe(c, 'subscription($id: Int!) { noteByPk(id: $id) { body } }', { id: 1 });
    const other = subscribe(c, 'subscription($id: Int!) { noteByPk(id: $id) { body } }', { id: 2 });
    await own.until((r) => r.data?.noteByPk?.body === 'alice 1');
    await other.until((r) => r.data && r.data.noteByPk === null);
    await sql(project, `update public.note set body = 'alice 1b' where id = 1`);
    await own.until((r) => r.data?.noteByPk?.body === 'alice 1b');
    await sql(project, `update public.note set body = 'alice 1' where id = 1`);
    await own.until((r) => r.data?.noteByPk?.body === 'alice 1', 1);
    own.stop();
    other.stop();
  });

  it('a JWT that expires ends its subscriptions with an error saying so', async () => {
    const s = subscribe(await asUser('alice', 2), NOTES);
    await s.until((r) => bodies(r).includes('alice 1'));
    await eventually(() => s.error !== undefined, { timeoutMs: 6_000, intervalMs: 20 });
    expect(JSON.stringify(s.error)).toMatch(/JWT expired/);
  });

  it('an expired or foreign token is refused at connection_init', async () => {
    const foreign = subscribe(client({ apikey: 'not-a-key' }), NOTES);
    await eventually(() => foreign.error !== undefined, { timeoutMs: 10_000, intervalMs: 20 });
    expect(foreign.error.code).toBe(4403);
    expect(foreign.error.reason).toMatch(/Invalid API key/);
    expect(foreign.results).toEqual([]);
  });

  it('failed connection_inits count towards a network ban, which then refuses the upgrade', async () => {
    const ip = '127.0.0.7';
    const threshold = tp.config.banThreshold;
    for (let i = 0; i < threshold; i++) {
      const code = await new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(wsUrl(tp), 'graphql-transport-ws', { localAddress: ip });
        ws.on('open', () =>
          ws.send(JSON.stringify({ type: 'connection_init', payload: { apikey: 'guess' } })),
        );
        ws.on('close', (c: number) => resolve(c));
        ws.on('error', reject);
      });
      expect(code).toBe(4403);
    }
    expect(await upgradeStatus(wsUrl(tp).replace(/^ws/, 'http'), ip)).toBe(403);
    // Another address is not affected.
    expect(await upgradeStatus(wsUrl(tp).replace(/^ws/, 'http'), '127.0.0.8')).toBe(101);
  });

  it('a new connection (reconnect) gets the full current result at once', async () => {
    const first = await asUser('bob');
    const a = subscribe(first, NOTES);
    await a.until((r) => bodies(r).join() === 'bob 1');
    await first.dispose();
    await sql(project, `insert into public.note (owner, body) values ('bob', 'bob 2')`);
    const b = subscribe(await asUser('bob'), NOTES);
    await b.until((r) => bodies(r).join() === 'bob 1,bob 2');
    expect(b.results[0]).toEqual({ data: { noteCollection: { edges: expect.any(Array) } } });
    expect(bodies(b.results[0])).toEqual(['bob 1', 'bob 2']);
    b.stop();
  });

  it('clients that drop their connections while results are pushed leave nothing behind; the others keep receiving', async () => {
    const steady = subscribe(await asUser('carol'), NOTES);
    await steady.until(() => true);
    const base = tp.realtime.stats().subscribers;
    const token = await userToken(project, 'carol');
    // Twenty raw sockets: each subscribes, then is cut (a TCP reset, no close frame) at a random
    // moment after its first result, while writes keep results going out.
    const dropped = Array.from(
      { length: 20 },
      (_, i) =>
        new Promise<void>((resolve, reject) => {
          const ws = new WebSocket(wsUrl(tp), 'graphql-transport-ws');
          ws.on('open', () =>
            ws.send(
              JSON.stringify({
                type: 'connection_init',
                payload: { apikey: project.anonKey, Authorization: `Bearer ${token}` },
              }),
            ),
          );
          ws.on('message', (data) => {
            const m = JSON.parse(String(data));
            if (m.type === 'connection_ack')
              ws.send(JSON.stringify({ id: `s${i}`, type: 'subscribe', payload: { query: NOTES } }));
            else if (m.type === 'next') {
              // A whole message (sent in fragments), under carol's RLS.
              for (const b of bodies(m.payload)) expect(b).toMatch(/^carol/);
              setTimeout(() => ws.terminate(), Math.random() * 300);
            }
          });
          ws.on('close', () => resolve());
          ws.on('error', reject);
        }),
    );
    for (let i = 0; i < 10; i++) {
      await sql(project, `insert into public.note (owner, body) values ('carol', 'carol drop ${i}')`);
      await sleep(30);
    }
    await Promise.all(dropped);
    await eventually(() => tp.realtime.stats().subscribers === base, { timeoutMs: 10_000, intervalMs: 20 });
    await sql(project, `insert into public.note (owner, body) values ('carol', 'carol after')`);
    await steady.until((r) => bodies(r).includes('carol after'));
    const answer = await postGraphQL(
      graphqlUrl(tp),
      { query: '{ __typename }' },
      { apikey: project.anonKey },
    );
    expect(answer.status).toBe(200);
    steady.stop();
  });

  it('upgrade headers carry the credentials when connection_init does not', async () => {
    const { createClient } = await import('graphql-ws');
    const WebSocket = (await import('ws')).default as unknown as new (
      url: string,
      protocols: string | string[],
    ) => unknown;
    const token = await userToken(project, 'alice');
    class WithHeaders extends (WebSocket as unknown as { new (...a: unknown[]): object }) {
      constructor(url: string, protocols: string | string[]) {
        super(url, protocols, { headers: { apikey: project.anonKey, authorization: `Bearer ${token}` } });
      }
    }
    const c = createClient({ url: wsUrl(tp), webSocketImpl: WithHeaders, retryAttempts: 0, lazy: true });
    clients.push(c);
    const s = subscribe(c, NOTES);
    await s.until((r) => bodies(r).join() === 'alice 1');
    s.stop();
  });

  it('routes by /project/<ref> and refuses unknown paths and projects', async () => {
    const c = client({ apikey: project.anonKey }, wsUrl(tp, `/project/${project.ref}`));
    const s = subscribe(c, NOTES);
    // anon's policy shows every note.
    await s.until((r) => bodies(r).includes('alice 1') && bodies(r).includes('bob 1'));
    s.stop();
    expect(await upgradeStatus(`${tp.url}/project/aaaaaaaaaaaaaaaaaaaa/graphql/v1`)).toBe(404);
    expect(await upgradeStatus(`${tp.url}/storage/v1/object`)).toBe(404);
  });

  it('a request asking for another upgrade (h2c, as curl --http2 does) is served as a plain request', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${tp.url}/health`, {
        headers: {
          connection: 'Upgrade, HTTP2-Settings',
          upgrade: 'h2c',
          'http2-settings': 'AAMAAABkAAQAoAAAAAIAAAAA',
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString('utf8');
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer).toEqual({ status: 200, body: JSON.stringify({ status: 'ok', database: 'up' }) });
  });

  it('refuses what is not a subscription of the Subscription root, and subscriptions over the limit', async () => {
    const c = client({ apikey: project.anonKey });
    const query = subscribe(c, '{ noteCollection { edges { node { id } } } }');
    const two = subscribe(
      c,
      'subscription { a: noteCollection { __typename } b: noteCollection { __typename } }',
    );
    const unknown = subscribe(c, 'subscription { nope { id } }');
    const mutation = subscribe(
      c,
      'subscription { insertIntoNoteCollection(objects: [{owner: "x", body: "y"}]) { affectedCount } }',
    );
    await eventually(() => [query, two, unknown, mutation].every((s) => s.error), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect(query.error[0].message).toMatch(/Only subscriptions/);
    expect(two.error[0].message).toMatch(/exactly one top-level field/);
    expect(unknown.error[0].message).toBe('Unknown field "nope" on type Subscription');
    expect(mutation.error[0].message).toBe('Unknown field "insertIntoNoteCollection" on type Subscription');
    // The HTTP API's width limit and the parser's bounds hold here too.
    const nested = subscribe(c, `subscription { noteCollection ${'{ a '.repeat(5000)}${'} '.repeat(5000)} }`);
    const wide = subscribe(
      c,
      `subscription { noteCollection(first: 1) { edges { node { ${'id '.repeat(6000)} } } } }`,
    );
    await eventually(() => nested.error !== undefined && wide.error !== undefined, {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect(nested.error[0].message).toMatch(/^Syntax Error/);
    expect(wide.error[0].message).toMatch(/exceeds the maximum allowed selection count of 5000/);
    // maxPerConnection is 5 here: the sixth is refused.
    const held = Array.from({ length: 5 }, () => subscribe(c, NOTES));
    await Promise.all(held.map((s) => s.until((r) => bodies(r).length > 0)));
    const sixth = subscribe(c, NOTES);
    await eventually(() => sixth.error !== undefined, { timeoutMs: 10_000, intervalMs: 20 });
    expect(sixth.error[0].message).toMatch(/Too many subscriptions on this connection \(the limit is 5\)/);
    for (const s of held) s.stop();
  });

  it('a field error is pushed as the query would answer it (pg_graphql error shape)', async () => {
    const s = subscribe(
      client({ apikey: project.anonKey }),
      'subscription { noteCollection(first: -1) { edges { node { id } } } }',
    );
    const r: Json = await s.until((x) => x.errors);
    expect(r.errors[0].message).toEqual(expect.any(String));
    s.stop();
  });
});

describe('live queries over graphql-sse (event streams, headers for auth)', () => {
  function sse(headers: Record<string, string>, url = `${tp.url}/graphql/v1`) {
    return createSseClient({ url, singleConnection: false, headers, retryAttempts: 0 });
  }

  const sseSubscribe = (c: ReturnType<typeof sse>, query: string): Stream => subscribe(c, query);

  it('streams live results under RLS; a row moved out of view disappears', async () => {
    const token = await userToken(project, 'alice');
    const s = sseSubscribe(sse({ apikey: project.anonKey, authorization: `Bearer ${token}` }), NOTES);
    const first = await s.until((r) => bodies(r).includes('alice 1'));
    for (const b of bodies(first)) expect(b).toMatch(/^alice/);
    await sql(project, `insert into public.note (owner, body) values ('alice', 'sse 1')`);
    await s.until((r) => bodies(r).includes('sse 1'));
    const seen = s.results.length;
    await sql(project, `update public.note set owner = 'bob' where body = 'sse 1'`);
    await s.until((r) => !bodies(r).includes('sse 1'), seen);
    for (const r of s.results) for (const b of bodies(r)) expect(b).not.toMatch(/bob/);
    s.stop();
  });

  it('refuses a foreign key with 401, and ends with an error event when the JWT expires', async () => {
    const bad = sseSubscribe(sse({ apikey: 'nope' }), NOTES);
    await eventually(() => bad.error !== undefined, { timeoutMs: 10_000, intervalMs: 20 });
    expect(String(bad.error)).toMatch(/401/);
    const token = await userToken(project, 'alice', 2);
    const s = sseSubscribe(sse({ apikey: project.anonKey, authorization: `Bearer ${token}` }), NOTES);
    await s.until((r) => bodies(r).includes('alice 1'));
    await eventually(() => s.completed, { timeoutMs: 6_000, intervalMs: 20 });
    expect(s.results.at(-1)).toEqual({ errors: [{ message: expect.stringMatching(/^JWT expired/) }] });
  });

  it("GraphiQL's request (yoga's GraphiQL at /graphql/v1: GET, Accept: text/event-stream) streams results", async () => {
    const ctl = new AbortController();
    const params = new URLSearchParams({ query: NOTES, variables: '{}', extensions: '{}' });
    const res = await fetch(`${tp.url}/graphql/v1?${params}`, {
      headers: { accept: 'text/event-stream', apikey: project.anonKey },
      signal: ctl.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    ctl.abort();
    const [event, data] = text.split('\n');
    expect(event).toBe('event: next');
    expect(bodies(JSON.parse((data as string).slice('data: '.length)))).toContain('bob 1');
    await eventually(() => tp.realtime.stats().subscribers === 0, { timeoutMs: 10_000, intervalMs: 20 });
  });

  it('a query asked for as an event stream is not taken over (the GraphQL route answers it)', async () => {
    const res = await postGraphQL(
      graphqlUrl(tp),
      { query: NOTES },
      { accept: 'application/json', apikey: project.anonKey },
    );
    // Over plain HTTP a subscription is what it always was: refused by the engine.
    expect(res.json).toEqual({ errors: [{ message: 'Subscriptions are not supported' }] });
  });
});
