/**
 * The GraphQL engine as the HTTP layer sees it (src/graphql/engine.ts). Loaded lazily so that the
 * HTTP layer, the CLI and the platform can start before the first GraphQL request.
 */
import type pg from 'pg';
import type { GraphQLSchema } from 'graphql';
import type { Principal } from '../../db/with-role.js';

export interface GraphQLRequestBody {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

export interface GraphQLEngine {
  /** Idempotent database-side objects (schema `graphql`, schema version sequence, event triggers...). */
  installSchema(client: pg.ClientBase): Promise<void>;
  /** One request on a client whose role and search_path are already set. */
  resolve(client: pg.ClientBase, req: GraphQLRequestBody): Promise<Record<string, unknown>>;
  /** One request as `principal`, in one round trip. */
  resolveWithPool(pool: pg.Pool, principal: Principal, req: GraphQLRequestBody): Promise<Record<string, unknown>>;
  /** The reflected schema for the client's current role and search_path. */
  buildGraphQLSchema(client: pg.ClientBase): Promise<GraphQLSchema>;
}

// A variable specifier: the engine module is written by another part of the project, and the
// HTTP layer must compile before it exists.
const ENGINE_MODULE = '../engine.js';
let loading: Promise<GraphQLEngine> | undefined;

export function loadEngine(): Promise<GraphQLEngine> {
  loading ??= (import(ENGINE_MODULE) as Promise<GraphQLEngine>).catch((err: unknown) => {
    loading = undefined;
    throw new Error(`the GraphQL engine (src/graphql/engine.ts) could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
  });
  return loading;
}
