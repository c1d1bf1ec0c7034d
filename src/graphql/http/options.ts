/** Configuration of the GraphQL HTTP handler, and what one request is served against. */
import type pg from 'pg';
import type { IncomingMessage } from 'node:http';
import type { YogaServerOptions } from 'graphql-yoga';
import { DEFAULT_MAX_DEPTH, DEFAULT_MAX_SELECTIONS } from '../../config.js';

export { DEFAULT_MAX_DEPTH, DEFAULT_MAX_SELECTIONS };

/** The database and keys one request is served against (one project). */
export interface GraphQLTarget {
  /** Pool connected as the API login role (it switches to the request's role per transaction). */
  pool: pg.Pool;
  /** HS256 secret that signs the project's keys and user JWTs. */
  jwtSecret: string;
  /** The project's anon key (any valid project JWT is accepted as apikey too). */
  anonKey?: string;
  serviceRoleKey?: string;
}

export interface GraphQLLimits {
  /** Largest accepted request body in bytes (413 beyond). Default 1 MiB. */
  maxBodyBytes?: number;
  /** Deepest accepted selection nesting (a GraphQL error beyond); false for none. Default 20. */
  maxDepth?: number | false;
  /**
   * Most field selections one operation may make, fragments expanded (a GraphQL error beyond,
   * before any other work); false for none. Default 5,000.
   */
  maxSelections?: number | false;
}

export interface GraphiQLSettings {
  /** Page title. */
  title?: string;
  /** Headers pre-filled in GraphiQL's header editor (e.g. `{ apikey: anonKey }` for local development). */
  defaultHeaders?: Record<string, string>;
  /** Query shown when the page opens. */
  defaultQuery?: string;
}

export interface GraphQLHandlerOptions extends GraphQLLimits {
  /** One database: the pool (as the API login role) ... */
  pool?: pg.Pool;
  /** ... or a function giving it per request (e.g. created lazily). */
  getPool?: (req: IncomingMessage) => pg.Pool | Promise<pg.Pool>;
  jwtSecret?: string;
  anonKey?: string;
  serviceRoleKey?: string;
  /** Several databases: the target of each request (undefined answers 404 "Project not found"). */
  getTarget?: (req: IncomingMessage) => GraphQLTarget | undefined | Promise<GraphQLTarget | undefined>;
  /** Path before `/graphql/v1` (e.g. `/api`); default none. */
  basePath?: string;
  /** GraphiQL for browsers at the same path (default on). */
  graphiql?: boolean | GraphiQLSettings;
  /** CORS, as graphql-yoga takes it (default: any origin, the apikey/authorization headers allowed). */
  cors?: YogaServerOptions<object, object>['cors'];
  /** Where unexpected errors are logged (graphql-yoga's logger setting); default 'error'. */
  logging?: YogaServerOptions<object, object>['logging'];
  /**
   * Told what a person should know about a schema when its catalog is first loaded (for a role,
   * search_path and schema version): relationships renamed because two would share a name, tables
   * left out because another took their type names. Default: logged as warnings unless `logging`
   * is false.
   */
  onSchemaNotice?: (message: string) => void;
}

/** Where the notices of newly loaded catalogs go (`onSchemaNotice`, else the log). */
export function schemaNoticesOf(opts: GraphQLHandlerOptions): ((notices: string[]) => void) | undefined {
  const each =
    opts.onSchemaNotice ??
    (opts.logging === false ? undefined : (m: string) => console.warn(`[strata graphql] warning: ${m}`));
  if (!each) return undefined;
  return (notices) => {
    for (const m of notices) each(m);
  };
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
export const GRAPHQL_PATH = '/graphql/v1';

/** The limits every request is checked against, defaults applied. */
export interface RequestLimits {
  maxDepth: number | false;
  maxSelections: number | false;
}

export function limitsOf(opts: GraphQLLimits): RequestLimits {
  return {
    maxDepth: opts.maxDepth === undefined ? DEFAULT_MAX_DEPTH : opts.maxDepth,
    maxSelections: opts.maxSelections === undefined ? DEFAULT_MAX_SELECTIONS : opts.maxSelections,
  };
}

export function endpointOf(basePath: string | undefined): string {
  const base = (basePath ?? '').replace(/\/+$/, '');
  if (base && !base.startsWith('/')) throw new Error(`basePath must start with "/" (got "${basePath}")`);
  return base + GRAPHQL_PATH;
}
