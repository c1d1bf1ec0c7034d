/** A request's plan: per top-level field, its SQL statement, a constant, an introspection call or an error. */
import type { CancelSignal } from '../../db/cancel-request.js';
import type { FieldNode } from 'graphql';
import type { Catalog } from '../introspect/model.js';
import { NulInTextError } from '../../db/sql-text.js';
import { GraphQLEngineError } from '../plan/errors.js';
import { buildOperation } from '../plan/operation.js';
import { TEMPLATE, type TemplateReads } from '../plan/values.js';
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

/** The plan of `req`; with `template`, its string and integer variables are read for reuse (plan-template.ts). */
export function planRequest(catalog: Catalog, req: Request, template?: TemplateReads): Plan {
  if (catalog.loadError) return { kind: 'response', response: { errors: [{ message: catalog.loadError }] } };
  let op: Operation;
  try {
    const doc = req.parsed ?? parseRequestDocument(req.query);
    if (doc instanceof GraphQLEngineError) throw doc;
    op = selectOperation(doc, req.operationName, req.variables);
  } catch (e) {
    return { kind: 'response', response: { errors: [{ message: (e as Error).message }] } };
  }
  if (template) op.vars[TEMPLATE] = template;
  const plan = planOperation(catalog, op);
  delete op.vars[TEMPLATE];
  return plan;
}

/** The operation's plan from the builder, its root fields transpiled to SQL. */
function planOperation(catalog: Catalog, op: Operation): Plan {
  const built = buildOperation(catalog, op.op, { fragments: op.fragments, vars: op.vars });
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
