/**
 * graphql-sse's single connection mode (src/realtime/sse-single.ts) with graphql-sse's own client
 * (`singleConnection: true`): PUT reserves, one event stream carries every operation, DELETE
 * stops one; a token works only with the credentials it was reserved with.
 */
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProjectContext } from '../../src/platform/project-context.js';
import type { TestPlatform } from '../support/platform.js';
import { bodies, type Json, NOTES, sql, startRealtimePlatform, subscribe, userToken } from './support.js';

let tp: TestPlatform;
let project: ProjectContext;

beforeAll(async () => {
  ({ tp, project } = await startRealtimePlatform());
});

afterAll(async () => {
  await tp?.close();
});

function single(headers: Record<string, string>) {
  return createClient({ url: `${tp.url}/graphql/v1`, singleConnection: true, headers, retryAttempts: 0 });
}

describe('graphql-sse single connection mode', () => {
  it('carries two users’ live queries on their own streams, under RLS; unsubscribe stops one', async () => {
    const alice = single({
      apikey: project.anonKey,
      authorization: `Bearer ${await userToken(project, 'alice')}`,
    });
    const bob = single({
      apikey: project.anonKey,
      authorization: `Bearer ${await userToken(project, 'bob')}`,
    });
    const a1 = subscribe(alice, NOTES);
    const a2 = subscribe(alice, 'subscription { noteCollection(first: 1) { edges { node { id } } } }');
    const b = subscribe(bob, NOTES);
    await a1.until((r) => bodies(r).includes('alice 1'));
    await a2.until((r: Json) => r.data?.noteCollection?.edges?.length === 1);
    await b.until((r) => bodies(r).includes('bob 1'));
    await sql(
      project,
      `insert into public.note (owner, body) values ('alice', 'single 1'), ('bob', 'single 2')`,
    );
    await a1.until((r) => bodies(r).includes('single 1'));
    await b.until((r) => bodies(r).includes('single 2'));
    for (const r of a1.results) for (const x of bodies(r)) expect(x).not.toMatch(/bob|single 2/);
    for (const r of b.results) for (const x of bodies(r)) expect(x).not.toMatch(/alice|single 1/);
    a2.stop();
    const seen = a1.results.length;
    await sql(project, `insert into public.note (owner, body) values ('alice', 'single 3')`);
    await a1.until((r) => bodies(r).includes('single 3'), seen);
    alice.dispose();
    bob.dispose();
  });

  it('refuses a token with other credentials, a second stream, and a foreign key', async () => {
    const headers = { apikey: project.anonKey, authorization: `Bearer ${await userToken(project, 'alice')}` };
    const put = await fetch(`${tp.url}/graphql/v1`, { method: 'PUT', headers });
    expect(put.status).toBe(201);
    const token = await put.text();
    const ctl = new AbortController();
    const stream = await fetch(`${tp.url}/graphql/v1`, {
      headers: { ...headers, accept: 'text/event-stream', 'x-graphql-event-stream-token': token },
      signal: ctl.signal,
    });
    expect(stream.status).toBe(200);
    const again = await fetch(`${tp.url}/graphql/v1?token=${token}`, {
      headers: { ...headers, accept: 'text/event-stream' },
    });
    expect(again.status).toBe(409);
    // Bob's credentials with Alice's token: the stream is not found for him.
    const bobHeaders = {
      apikey: project.anonKey,
      authorization: `Bearer ${await userToken(project, 'bob')}`,
    };
    const op = await fetch(`${tp.url}/graphql/v1`, {
      method: 'POST',
      headers: { ...bobHeaders, 'content-type': 'application/json', 'x-graphql-event-stream-token': token },
      body: JSON.stringify({ query: NOTES, extensions: { operationId: 'x' } }),
    });
    expect(op.status).toBe(404);
    const missingId = await fetch(`${tp.url}/graphql/v1`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'x-graphql-event-stream-token': token },
      body: JSON.stringify({ query: NOTES }),
    });
    expect(missingId.status).toBe(400);
    const query = await fetch(`${tp.url}/graphql/v1`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'x-graphql-event-stream-token': token },
      body: JSON.stringify({ query: '{ __typename }', extensions: { operationId: 'q' } }),
    });
    expect(query.status).toBe(400);
    expect(((await query.json()) as Json).errors[0].message).toMatch(/Only subscriptions/);
    const foreign = await fetch(`${tp.url}/graphql/v1`, { method: 'PUT', headers: { apikey: 'nope' } });
    expect(foreign.status).toBe(401);
    const unknown = await fetch(`${tp.url}/graphql/v1?operationId=x`, {
      method: 'DELETE',
      headers: { ...headers, 'x-graphql-event-stream-token': 'no-such-token' },
    });
    expect(unknown.status).toBe(404);
    ctl.abort();
  });
});
