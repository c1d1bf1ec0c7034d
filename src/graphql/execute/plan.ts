/** A request's plan: per top-level field, its SQL statement, a constant, an introspection call or an error. */
import type { FieldNode } from 'graphql';
import type { Catalog } from '../introspect/model.js';
import { NulInTextError } from '../../db/sql-text.js';
import { GraphQLEngineError } from '../build/errors.js';
import { buildRootField } from '../build/root.js';
import { TEMPLATE, type TemplateReads } from '../build/values.js';
import { transpileRootField, type CompiledField } from '../transpile/root.js';
import { collectFields } from '../build/selection.js';
import { rootFields } from '../introspect/root-fields.js';
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

function planOperation(catalog: Catalog, op: Operation): Plan {
  const operation = op.op.operation === 'mutation' ? 'mutation' : 'query';
  const typeName = operation === 'mutation' ? 'Mutation' : 'Query';
  if (operation === 'mutation' && rootFields(catalog).mutation.size === 0) {
    return { kind: 'response', response: { data: null, errors: [{ message: 'Unknown type Mutation' }] } };
  }
  const items: PlanItem[] = [];
  const errors: string[] = [];
  try {
    const ctx = { fragments: op.fragments, vars: op.vars };
    for (const f of collectFields([op.op.selectionSet], typeName, ctx)) {
      try {
        if (f.name === '__typename') items.push({ alias: f.alias, kind: 'value', value: typeName });
        else if ((f.name === '__schema' || f.name === '__type') && operation === 'query') {
          if (!catalog.introspection) throw new GraphQLEngineError(`Unknown field "${f.name}" on type Query`);
          items.push({ alias: f.alias, kind: 'introspect', node: f.node });
        } else
          items.push({
            alias: f.alias,
            kind: 'sql',
            compiled: transpileRootField(buildRootField(catalog, ctx, f, operation)),
          });
      } catch (e) {
        if (!(e instanceof GraphQLEngineError) || e.requestLevel) throw e;
        if (operation === 'mutation')
          return { kind: 'response', response: { data: null, errors: [{ message: e.message }] } };
        errors.push(e.message);
      }
    }
  } catch (e) {
    if (e instanceof GraphQLEngineError && e.requestLevel)
      return { kind: 'response', response: { errors: [{ message: e.message }] } };
    // A NUL written into SQL text is PostgreSQL's error for the value, as if it had been sent.
    if (e instanceof GraphQLEngineError || e instanceof NulInTextError)
      return { kind: 'response', response: { data: null, errors: [{ message: e.message }] } };
    throw e;
  }
  return { kind: 'plan', operation, items, op, errors };
}
