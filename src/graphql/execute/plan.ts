/** A request's plan: per top-level field, its SQL statement, a constant, an introspection call or an error. */
import type { CancelSignal } from '../../db/cancel-request.js';
import type { FieldNode } from 'graphql';
import type { Catalog } from '../introspect/model.js';
import { NulInTextError } from '../../db/sql-text.js';
import { GraphQLEngineError } from '../plan/errors.js';
import { buildOperation, type OperationPlan } from '../plan/operation.js';
import type { TemplateReads } from '../plan/values.js';
import { transpileRootField, type CompiledField } from '../transpile/root.js';
import { parseRequestDocument, selectOperation, type Operation, type ParsedDocument } from './document.js';

export type PlanItem =
  | { alias: string; kind: 'sql'; compiled: CompiledField }
  | { alias: string; kind: 'value'; value: unknown }
  | { alias: string; kind: 'introspect'; node: FieldNode }
  | { alias: string; kind: 'error'; message: string };

export type Plan =
  | { kind: 'response'; response: Record<string, unknown> }
  | { kind: 'plan'; operation: 'query' | 'mutation'; items: PlanItem[]; op: Operation; errors: string[] };

export interface Request {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
  /** `query` already parsed by parseRequestDocument (the HTTP layer's checks parse it first). */
  parsed?: ParsedDocument;
  /**
   * Aborted when the caller is gone (the client closed the connection): a query's statement still
   * running is cancelled, and its connection is not reused. A mutation runs to its end, as it would
   * behind pg_graphql.
   */
  signal?: CancelSignal;
  /**
   * Told, when the catalog of a (role, search_path, schema version) is first loaded, what a person
   * should know about it (relationships renamed, tables left out for a type-name clash).
   */
  onCatalogNotices?: (notices: string[]) => void;
}

type ResponsePlan = Extract<Plan, { kind: 'response' }>;

/** The operation `req` runs, or the response its request-level error makes (catalog, parse, operation choice). */
function operationOf(catalog: Catalog, req: Request): Operation | ResponsePlan {
  if (catalog.loadError) return { kind: 'response', response: { errors: [{ message: catalog.loadError }] } };
  try {
    const doc = req.parsed ?? parseRequestDocument(req.query);
    if (doc instanceof GraphQLEngineError) throw doc;
    return selectOperation(doc, req.operationName, req.variables);
  } catch (e) {
    return { kind: 'response', response: { errors: [{ message: (e as Error).message }] } };
  }
}

/** The plan of `req`; with `template`, its string and integer variables are read for reuse (plan-template.ts). */
export function planRequest(catalog: Catalog, req: Request, template?: TemplateReads): Plan {
  const op = operationOf(catalog, req);
  if ('kind' in op) return op;
  return planOperation(catalog, op, template);
}

/** What the planner and the transpiler make of a request, nothing run (engine.ts compile). */
export interface CompiledRequest {
  /**
   * The planner's output (plan/operation.ts): per top-level field a RootPlan, a constant or an
   * introspection call, and the fields' errors; or the response a request-level error makes.
   */
  plan: OperationPlan;
  /** Per top-level field planned to SQL, in document order: its alias and its statement. */
  sql: Array<{ alias: string } & CompiledField>;
}

/** `req`'s plan and SQL against `catalog`, as planRequest makes them (with `template`, for reuse). */
export function compileRequest(catalog: Catalog, req: Request, template?: TemplateReads): CompiledRequest {
  const op = operationOf(catalog, req);
  if ('kind' in op) return { plan: op, sql: [] };
  const plan = buildOperation(catalog, op.op, { fragments: op.fragments, vars: op.vars, template });
  const sql =
    plan.kind === 'response'
      ? []
      : plan.fields.flatMap((f) =>
          f.kind === 'root' ? [{ alias: f.alias, ...transpileRootField(f.plan) }] : [],
        );
  return { plan, sql };
}

/** The operation's plan from the builder, its root fields transpiled to SQL. */
function planOperation(catalog: Catalog, op: Operation, template: TemplateReads | undefined): Plan {
  const built = buildOperation(catalog, op.op, { fragments: op.fragments, vars: op.vars, template });
  if (built.kind === 'response') return built;
  try {
    const items = built.fields.map((f): PlanItem => {
      if (f.kind !== 'root') return f;
      return { alias: f.alias, kind: 'sql', compiled: transpileRootField(f.plan) };
    });
    return { kind: 'plan', operation: built.operation, items, op, errors: built.errors };
  } catch (e) {
    // A NUL written into SQL text is PostgreSQL's error for the value, as if it had been sent.
    if (e instanceof NulInTextError)
      return { kind: 'response', response: { data: null, errors: [{ message: e.message }] } };
    throw e;
  }
}
