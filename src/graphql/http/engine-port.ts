/**
 * The GraphQL engine as the HTTP layer, the CLI and the extension packaging use it
 * (src/graphql/engine.ts), behind one small interface.
 */
import type { CancelSignal } from '../../db/cancel-request.js';
import type pg from 'pg';
import type { GraphQLSchema } from 'graphql';
import type { Principal } from '../../db/with-role.js';
import * as engineModule from '../engine.js';
import type { ParsedDocument } from '../execute/document.js';

export interface GraphQLRequestBody {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

export interface GraphQLEngine {
  /** Idempotent database-side objects (schema `graphql`, schema version sequence, event triggers...). */
  installSchema(client: pg.ClientBase): Promise<void>;
  /** The SQL of those objects, less the schema itself (the extension script's body). */
  installSchemaSql(): string;
  /** One request on a client whose role and search_path are already set. */
  resolve(client: pg.ClientBase, req: GraphQLRequestBody): Promise<Record<string, unknown>>;
  /** One request as `principal`, in one round trip. */
  resolveWithPool(
    pool: pg.Pool,
    principal: Principal,
    req: GraphQLRequestBody & { parsed?: ParsedDocument; signal?: CancelSignal },
  ): Promise<Record<string, unknown>>;
  /** The same, as the response body's JSON text (the statements' JSON never parsed). */
  resolveWithPoolText(
    pool: pg.Pool,
    principal: Principal,
    req: GraphQLRequestBody & {
      parsed?: ParsedDocument;
      signal?: CancelSignal;
      onCatalogNotices?: (notices: string[]) => void;
    },
  ): Promise<string>;
  /** The reflected schema for the client's current role and search_path. */
  buildGraphQLSchema(client: pg.ClientBase): Promise<GraphQLSchema>;
  /** The same, read-only from the catalog alone (no engine objects needed), with warnings for a person. */
  reflectSchema(
    client: pg.ClientBase,
    opts?: { omitInvalidEnumValues?: boolean },
  ): Promise<{ schema: GraphQLSchema; warnings: string[] }>;
}

const engine: GraphQLEngine = engineModule;

/** Async so callers need not change if the engine becomes a lazily loaded module again. */
export async function loadEngine(): Promise<GraphQLEngine> {
  return engine;
}
