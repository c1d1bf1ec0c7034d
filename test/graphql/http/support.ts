/**
 * Shared setup for the GraphQL HTTP tests: a database with the engine's objects, keys, and a local
 * server. The requests themselves: test/support/graphql.ts.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type RequestListener, type Server } from 'node:http';
import type pg from 'pg';
import { createTestDatabase, connect, type TestDatabase } from '../../support/database.js';
import { createPool } from '../../../src/db/pool.js';
import { mintApiKey, signJwt } from '../../../src/auth/jwt.js';
import { installGraphQL } from '../../../src/graphql/extension/install.js';

export interface GraphQLTestDb {
  db: TestDatabase;
  pool: pg.Pool;
  jwtSecret: string;
  anonKey: string;
  serviceRoleKey: string;
  close(): Promise<void>;
}

/** A fresh project database with a `todo` table (introspection on), the engine's objects installed as plain SQL. */
export async function graphqlTestDb(prefix = 'gqlhttp'): Promise<GraphQLTestDb> {
  const db = await createTestDatabase({ prefix });
  const c = await connect(db.url);
  try {
    await installGraphQL(c, { extensionDir: false });
    await c.query(`
      comment on schema public is '@graphql({"introspection": true})';
      create table public.todo (id serial primary key, title text not null);
      insert into public.todo (title) values ('write tests'), ('ship it');
      grant select, insert, update, delete on public.todo to anon, authenticated, service_role;
      grant usage on sequence public.todo_id_seq to anon, authenticated, service_role;`);
  } finally {
    await c.end();
  }
  const pool = createPool(db.apiUrl, { max: 4 });
  const jwtSecret = randomBytes(32).toString('base64url');
  return {
    db,
    pool,
    jwtSecret,
    anonKey: await mintApiKey(jwtSecret, 'anon', 'testref'),
    serviceRoleKey: await mintApiKey(jwtSecret, 'service_role', 'testref'),
    async close() {
      await pool.end().catch(() => {});
      await db.drop();
    },
  };
}

export async function listen(
  listener: RequestListener,
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer(listener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address() as { port: number };
  return {
    server,
    url: `http://127.0.0.1:${addr.port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** An unsigned token (`alg: none`). */
export function algNoneToken(claims: Record<string, unknown>): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
}

export { signJwt };

export const TODOS_QUERY =
  '{ todoCollection(filter: {id: {lte: 2}}, orderBy: [{id: AscNullsLast}]) { edges { node { id title } } } }';
