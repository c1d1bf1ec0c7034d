/**
 * The GraphQL engine's public face: a TypeScript re-implementation of pg_graphql (v1.6.x).
 *
 * introspect/  one catalog query → the catalog model (every naming/typing decision)
 * schema/      catalog model → graphql-js GraphQLSchema (SDL, introspection, GraphiQL)
 * compile/     operation AST × catalog → one SQL statement per top-level field, returning its JSON
 * execute/     request pipeline, caches, error shapes
 *
 * Caches (execute/cache.ts): catalog + schemas per (database, role, search_path, schema version);
 * plans per request inside that entry — a template per (document, operation, variable shape)
 * when string/integer variables only reach bound parameters, else per exact variables.
 * Round trips: resolve() = version check + one message with the statements (plus the catalog
 * query on a miss); resolveWithPool() = one message `begin; set local role; claims; version
 * guard; statements; commit` (a changed version makes the guard fail first: reload + retry).
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
