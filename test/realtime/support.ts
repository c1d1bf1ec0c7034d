/**
 * The realtime tests' platform: a default project whose `public` schema turned on subscriptions,
 * with a `note` table under RLS (each authenticated user sees the notes whose owner is their
 * `sub`), plus graphql-ws clients that record what they receive.
 */
import pg from 'pg';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { Client as UrqlClient, fetchExchange, subscriptionExchange } from '@urql/core';
import { signJwt } from '../../src/auth/jwt.js';
import { graphqlInstallHook } from '../../src/graphql/extension/install.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { eventually } from '../support/eventually.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

// biome-ignore lint/suspicious/noExplicitAny: results are read as whatever JSON the server sent.
export type Json = any;

export const SCHEMA = `
  comment on schema public is '@graphql({"inflect_names": true, "introspection": true, "strata": {"subscriptions": true}})';
  create table public.note (id serial primary key, owner text not null, body text not null);
  alter table public.note enable row level security;
  create policy own on public.note for all to authenticated
    using (owner = current_setting('request.jwt.claims', true)::json->>'sub')
    with check (owner = current_setting('request.jwt.claims', true)::json->>'sub');
  create policy everyone on public.note for select to anon using (true);
  grant select, insert, update, delete on public.note to anon, authenticated;
  grant usage on sequence public.note_id_seq to anon, authenticated;
  insert into public.note (owner, body) values ('alice', 'alice 1'), ('bob', 'bob 1');`;

export async function startRealtimePlatform(realtime: Partial<TestPlatform['config']['realtime']> = {}) {
  const base = (await import('../../src/config.js')).configFromEnv({}).realtime;
  const tp = await startTestPlatform(
    { realtime: { ...base, intervalMs: 100, ...realtime } },
    { projectBootstrapHooks: [graphqlInstallHook({ extensionDir: false })] },
  );
  const project = await tp.platform.defaultProject();
  await sql(project, SCHEMA);
  return { tp, project };
}

/** Runs SQL as the project's superuser (the writes a test makes behind the subscribers' backs). */
export async function sql(project: ProjectContext, text: string): Promise<void> {
  const c = new pg.Client({ connectionString: project.superuserUrl });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

export function userToken(project: ProjectContext, sub: string, expiresInSeconds = 3600): Promise<string> {
  return signJwt(project.jwtSecret, { sub, role: 'authenticated' }, { expiresInSeconds });
}

export function wsUrl(tp: TestPlatform, prefix = ''): string {
  return `${tp.url.replace(/^http/, 'ws')}${prefix}/graphql/v1`;
}

export function wsClient(url: string, connectionParams: Record<string, unknown>): Client {
  return createClient({ url, webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: true });
}

/** One subscription's record: every `next`, its error and whether it completed. */
export interface Stream {
  results: Json[];
  error?: Json;
  completed: boolean;
  /** Resolves with the first result (from `from` on) that `pred` accepts. */
  until(pred: (r: Json) => boolean, from?: number, ms?: number): Promise<Json>;
  stop(): void;
}

/** What graphql-ws' and graphql-sse's clients both have: subscribe(payload, sink) → unsubscribe. */
export interface Subscribable {
  subscribe: Client['subscribe'];
}

export function subscribe(client: Subscribable, query: string, variables?: Record<string, unknown>): Stream {
  const s: Stream = {
    results: [],
    completed: false,
    async until(pred, from = 0, ms = 10_000) {
      const failed = Symbol('failed');
      const hit = await eventually(() => s.results.slice(from).find(pred) || (s.error ? failed : false), {
        timeoutMs: ms,
        intervalMs: 20,
      }).catch(() => {
        throw new Error(`no matching result within ${ms} ms; got ${JSON.stringify(s.results)}`);
      });
      if (hit === failed) throw new Error(`subscription failed: ${JSON.stringify(s.error)}`);
      return hit;
    },
    stop: () => {},
  };
  s.stop = client.subscribe(
    { query, variables },
    {
      next: (r) => s.results.push(r),
      error: (e) => {
        s.error = e;
      },
      complete: () => {
        s.completed = true;
      },
    },
  );
  return s;
}

/** An urql client whose subscriptions go over `ws` (subscriptionExchange), queries over HTTP. */
export function urqlOver(ws: Client, url: string, apikey: string): UrqlClient {
  return new UrqlClient({
    url,
    fetchOptions: { headers: { apikey } },
    exchanges: [
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query || '' };
          return { subscribe: (sink) => ({ unsubscribe: ws.subscribe(input, sink) }) };
        },
      }),
      fetchExchange,
    ],
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const NOTES =
  'subscription { noteCollection(orderBy: [{id: AscNullsLast}]) { edges { node { id owner body } } } }';

export function bodies(r: Json): string[] {
  return r.data.noteCollection.edges.map((e: Json) => e.node.body);
}
