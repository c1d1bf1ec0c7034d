/**
 * The GraphQL hardening tests' server: a whole platform (test/support/platform.ts) whose default
 * project has the engine's objects and an account/blog schema (blog.owner → account, account.blogs),
 * plus request helpers and the project pool's counters.
 */
import { connect as netConnect } from 'node:net';
import pg from 'pg';
import { graphqlInstallHook } from '../../src/graphql/extension/install.js';
import { poolStats } from '../../src/db/pooled-client.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { eventually } from '../support/eventually.js';
import { postGraphQL } from '../support/graphql.js';

// biome-ignore lint/suspicious/noExplicitAny: responses are read as whatever JSON the server sent.
type Json = any;

export interface GraphQLPlatform {
  tp: TestPlatform;
  project: ProjectContext;
  endpoint: string;
  /** POST a GraphQL request as anon; status and parsed body. */
  post(body: unknown, headers?: Record<string, string>): Promise<{ status: number; json: Json }>;
  /** Clients of the project's pool lent out right now. */
  checkedOut(): number;
  close(): Promise<void>;
}

export const SCHEMA = `
  comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
  create table public.account (id serial primary key, email text not null);
  create table public.blog (
    id serial primary key,
    owner_id int not null references public.account (id),
    name text not null
  );
  insert into public.account (email) values ('a@x.com'), ('b@x.com');
  insert into public.blog (owner_id, name) values (1, 'A blog'), (1, 'A second blog'), (2, 'B blog');
  comment on table public.account is '@graphql({"totalCount": {"enabled": true}})';
  grant select, insert, update, delete on public.account, public.blog to anon;
  grant usage on all sequences in schema public to anon;`;

export async function startGraphQLPlatform(
  env: Partial<TestPlatform['config']> = {},
): Promise<GraphQLPlatform> {
  const tp = await startTestPlatform(env, {
    projectBootstrapHooks: [graphqlInstallHook({ extensionDir: false })],
  });
  const project = await tp.platform.defaultProject();
  const c = new pg.Client({ connectionString: project.superuserUrl });
  await c.connect();
  try {
    await c.query(SCHEMA);
  } finally {
    await c.end();
  }
  const endpoint = `${tp.url}/graphql/v1`;
  return {
    tp,
    project,
    endpoint,
    async post(body, headers = {}) {
      const res = await postGraphQL(endpoint, body, { apikey: project.anonKey, ...headers });
      return { status: res.status, json: res.json === undefined ? res.text : res.json };
    },
    checkedOut: () => poolStats(project.pool).checkedOut,
    close: () => tp.close(),
  };
}

/**
 * Sends raw bytes as one HTTP/1.1 request (for what fetch refuses to send, such as a NUL in a
 * header) and resolves with the status line's code (0 when the server closed without answering).
 */
export function rawRequest(url: string, request: Buffer): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = netConnect(Number(u.port), u.hostname);
    let data = '';
    socket.setTimeout(10_000, () => socket.destroy(new Error('raw request timed out')));
    socket.on('connect', () => socket.write(request));
    socket.on('data', (d) => {
      data += d.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(data);
      resolve(m ? Number(m[1]) : 0);
    });
  });
}

/** Waits until the project's pool has no client lent out (or `ms` pass); returns the count. */
export async function settledCheckedOut(gp: GraphQLPlatform, ms = 5_000): Promise<number> {
  await eventually(() => gp.checkedOut() === 0, { timeoutMs: ms, intervalMs: 20 }).catch(() => {});
  return gp.checkedOut();
}
