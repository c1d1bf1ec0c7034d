/**
 * The GraphQL engine's public face: a TypeScript re-implementation of pg_graphql (v1.6.x).
 *
 * The stages, and pg_graphql's module doing the same job:
 * introspect/  one catalog query → the catalog model (every naming/typing decision)  ≈ sql_types.rs
 * schema/      catalog model → graphql-js GraphQLSchema (SDL, introspection, GraphiQL) ≈ graphql.rs
 * plan/        operation AST × variables × catalog → a validated, typed plan per
 *              top-level field                                                      ≈ builder.rs
 * transpile/   plan → one SQL statement per top-level field, returning its JSON     ≈ transpile.rs
 * execute/     request pipeline, caches, error shapes                               ≈ resolve.rs
 *
 * Caches (execute/cache.ts): catalog + schemas per (database, role, search_path, schema version);
 * plans per request inside that entry — a template per (document, operation, variable shape)
 * when string/integer variables only reach bound parameters (execute/plan-template.ts), else per
 * exact variables.
 * Round trips: resolve() = version check + one message with the statements (plus the catalog
 * query on a miss); resolveWithPool() = one message `begin; select set_config(role), claims, version
 * guard; statements; commit` (a changed version makes the guard fail first: reload + retry);
 * resolveBatchWithPoolText() = the same one message for many requests, statements of one SQL text
 * sharing one statement (execute/batch-statements.ts).
 */
import { readFileSync } from 'node:fs';
import type { CancelSignal } from '../db/cancel-request.js';
import type pg from 'pg';
import type { GraphQLSchema } from 'graphql';
import { sqlPath } from '../db/sql-dir.js';
import type { ParsedDocument } from './execute/document.js';
import { compileRequest, type CompiledRequest } from './execute/plan.js';
import { reusableBuild, shapeKey, templateReads } from './execute/plan-template.js';
import { entryFor, resolveOnClient } from './execute/run-client.js';
import type { Catalog } from './introspect/model.js';
import type { ChangeTable } from './introspect/change-streams.js';
import { catalogOnPool, resolveOnPool, resolveOnPoolText } from './execute/run-pool.js';
import { resolveBatchOnPoolText, type BatchOptions } from './execute/run-batch.js';
import { resolveBatchesOnPoolText, type PrincipalBatch } from './execute/run-joint.js';
export { BATCH_MAX } from './execute/batch-statements.js';
export type { BatchOptions, PrincipalBatch };
/** Prepared statements of the one-message path, for other one-message callers (realtime's probes). */
export { forgetPrepared, isPreparedStateLost, segmentsFor, stopPreparing } from './execute/prepared.js';
import { rootFields } from './introspect/root-fields.js';
import { schemaOf } from './execute/cache.js';
import { loadCatalog } from './introspect/load.js';
import { buildSchemaFromCatalog } from './schema/build.js';

export interface GraphQLRequest {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
  /** `query` as parseRequestDocument (execute/document.ts) parsed it, when the caller did already. */
  parsed?: ParsedDocument;
  /** resolveWithPool: aborted when the caller is gone, a query's running statement is cancelled. */
  signal?: CancelSignal;
  /**
   * resolveWithPool: told, when the catalog of a (role, search_path, schema version) is first loaded, what a person
   * should know about it (relationships renamed, tables left out for a type-name clash).
   */
  onCatalogNotices?: (notices: string[]) => void;
}

export type { CompiledRequest, ChangeTable };

let objectsSql: string | undefined;

/**
 * The SQL of the engine's database-side objects (schema `graphql`: the schema version sequence and
 * its event triggers, exception/comment_directive helpers, the version guard, the schema state
 * marker), less `create schema graphql` (an extension's control file creates that): the extension
 * script's body (extension/install.ts). Its one source is sql/graphql/objects.sql, also copied at
 * build time into the project migration sql/project/0003_graphql_schema_version.sql
 * (scripts/generate-engine-sql.mjs).
 */
export function installSchemaSql(): string {
  objectsSql ??= readFileSync(sqlPath('graphql', 'objects.sql'), 'utf8');
  return objectsSql;
}

/** Installs the engine's database-side objects (idempotent). Needs a superuser (event triggers). */
export async function installSchema(client: pg.ClientBase): Promise<void> {
  await client.query(`create schema if not exists graphql;\n${installSchemaSql()}`);
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

/**
 * resolveWithPool's answer as the response body's JSON text: the statements' JSON goes from
 * PostgreSQL to the text without being parsed (the same bytes as JSON.stringify of resolveWithPool's).
 */
export async function resolveWithPoolText(
  pool: pg.Pool,
  principal: { role: string; claims: Record<string, unknown> },
  req: GraphQLRequest,
): Promise<string> {
  return resolveOnPoolText(pool, principal, req);
}

/** A Subscription field: a live query (the Query field of the same name) or a table's change stream. */
export type SubscriptionField = { kind: 'live' } | { kind: 'changes'; table: ChangeTable };

/**
 * resolveWithPoolText for many requests at once — typically one document (query text and
 * operationName) with different variables, as live queries refresh their subscribers — each
 * answer byte-identical to resolveWithPoolText's for that request alone. One round trip (role,
 * claims, version guard and every statement in one message): requests whose SQL has the same text
 * share one statement, their parameter sets joined laterally from one array per parameter (at most
 * `maxPerStatement`, default BATCH_MAX, sets per statement); others run as their own statements in
 * the same message. A message that fails is sent again with each set as its own statement, then by
 * halves down to a request alone, so each request gets its own error; mutations run alone
 * (execute/run-batch.ts).
 */
export async function resolveBatchWithPoolText(
  pool: pg.Pool,
  principal: { role: string; claims: Record<string, unknown> },
  reqs: readonly GraphQLRequest[],
  opts: BatchOptions = {},
): Promise<string[]> {
  return resolveBatchOnPoolText(pool, principal, reqs, opts);
}

/**
 * resolveBatchWithPoolText for several principals at once: each batch its own transaction, all in
 * one round trip when they are ready to go (execute/run-joint.ts), else each alone.
 */
export async function resolveBatchesWithPoolText(
  pool: pg.Pool,
  batches: readonly PrincipalBatch[],
  opts: BatchOptions = {},
): Promise<string[][]> {
  return resolveBatchesOnPoolText(pool, batches, opts);
}

/**
 * The `Subscription` root's fields `principal` may subscribe to (Strata `subscriptions`), by name:
 * live queries, which src/realtime/ runs through resolveWithPoolText as the Query field of the
 * same name, and change streams (`<type>Changes`).
 */
export async function subscriptionFieldsWithPool(
  pool: pg.Pool,
  principal: { role: string; claims: Record<string, unknown> },
): Promise<ReadonlyMap<string, SubscriptionField>> {
  const out = new Map<string, SubscriptionField>();
  for (const [name, rf] of rootFields(await catalogOnPool(pool, principal)).subscription)
    out.set(name, rf.kind === 'changes' ? { kind: 'changes', table: rf.changes } : { kind: 'live' });
  return out;
}

/**
 * The schema reflected straight from the catalog for the client's current role and search_path,
 * for offline use (`strata sdl`): it needs none of the engine's objects (no `graphql` schema),
 * writes nothing and caches nothing. `warnings` names what a person should fix (enum labels that
 * are not GraphQL names need a `mappings` directive).
 */
export async function reflectSchema(
  client: pg.ClientBase,
  opts: { omitInvalidEnumValues?: boolean } = {},
): Promise<{ schema: GraphQLSchema; warnings: string[] }> {
  const catalog = await loadCatalog(client);
  const warnings = catalog.invalidEnumLabels.map(
    (e) =>
      `enum ${e.schema}.${e.sqlName} (GraphQL ${e.enumName}): ${e.labels.map((l) => JSON.stringify(l)).join(', ')} ` +
      `${e.labels.length === 1 ? 'is not a valid GraphQL name' : 'are not valid GraphQL names'}; ` +
      `add a mappings directive, e.g. comment on type ${e.schema}.${e.sqlName} is '@graphql({"mappings": {${e.labels
        .map(
          (l) =>
            `${JSON.stringify(l)}: ${JSON.stringify(l.replace(/[^_0-9A-Za-z]/g, '_').replace(/^(?=[0-9])/, '_'))}`,
        )
        .join(', ')}}})'`,
  );
  warnings.push(...catalog.notices);
  if (catalog.loadError) warnings.push(catalog.loadError);
  const sdlOmissions: string[] = [];
  const schema = buildSchemaFromCatalog(catalog, {
    ...opts,
    sdlOmissions: opts.omitInvalidEnumValues ? sdlOmissions : undefined,
  });
  return { schema, warnings: [...warnings, ...sdlOmissions] };
}

/** The reflected schema for the client's current role and search_path. */
export async function buildGraphQLSchema(client: pg.ClientBase): Promise<GraphQLSchema> {
  return schemaOf(await entryFor(client), false);
}

/**
 * The catalog the client's current role and search_path see, as resolve() plans against it
 * (cached per role, search_path and schema version; needs the engine's objects). For compile().
 */
export async function catalogFor(client: pg.ClientBase): Promise<Catalog> {
  return (await entryFor(client)).catalog;
}

/**
 * The plan and the SQL of a request, without running it, as the request's first run plans them:
 * the planner's output per top-level field and each SQL field's statement (`$n` placeholders, its
 * parameters, and the variable each parameter takes as it is, when the plan can serve other values
 * of its string and integer variables: execute/plan-template.ts). A role's catalog comes from
 * catalogFor(client). Throws NulInTextError where a run would answer PostgreSQL's error for a NUL
 * in a value.
 */
export function compile(catalog: Catalog, req: GraphQLRequest): CompiledRequest {
  if (shapeKey(req.variables) !== undefined) {
    const reads = templateReads(req);
    const compiled = compileRequest(catalog, req, reads);
    if (
      compiled.plan.kind === 'fields' &&
      reusableBuild(compiled.plan.fields, compiled.plan.errors, reads, 'root')
    )
      return compiled;
  }
  return compileRequest(catalog, req);
}
