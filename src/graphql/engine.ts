/**
 * The GraphQL engine's public face: a TypeScript re-implementation of pg_graphql.
 * introspect/ (catalog) → schema/ (graphql-js schema) and compile/ (one SQL statement per top-level field) → execute/.
 */
import type pg from 'pg';
import type { GraphQLSchema } from 'graphql';
import { install } from './execute/install.js';
import { entryFor, resolveOnClient } from './execute/run-client.js';
import { resolveOnPool } from './execute/run-pool.js';
import { schemaOf } from './execute/cache.js';

export interface GraphQLRequest {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

/** Installs the engine's database-side objects (idempotent). Needs a superuser (event triggers). */
export async function installSchema(client: pg.ClientBase): Promise<void> {
  await install(client);
}

/** Resolves one request on `client`, as its current role and search_path (savepoint inside a transaction). */
export async function resolve(client: pg.ClientBase, req: GraphQLRequest): Promise<Record<string, unknown>> {
  return resolveOnClient(client, req);
}

/** The HTTP fast path: role + claims + schema-version guard + statements in one round trip. */
export async function resolveWithPool(
  pool: pg.Pool,
  principal: { role: string; claims: Record<string, unknown> },
  req: GraphQLRequest,
): Promise<Record<string, unknown>> {
  return resolveOnPool(pool, principal, req);
}

/** The reflected schema for the client's current role and search_path. */
export async function buildGraphQLSchema(client: pg.ClientBase): Promise<GraphQLSchema> {
  return schemaOf(await entryFor(client), false);
}
