/**
 * The builder's entry for an operation: its top-level fields → per field a RootPlan, a constant
 * (`__typename`) or an introspection call; or the response that its errors make (a mutation
 * stops at the first, a query collects one per field; request-level errors end the request).
 */
import type { FieldNode, OperationDefinitionNode } from 'graphql';
import type { Catalog } from '../introspect/model.js';
import { rootFields } from '../introspect/root-fields.js';
import { GraphQLEngineError } from './errors.js';
import type { RootPlan } from './plan-types.js';
import { buildRootField } from './root.js';
import { collectFields, type Ctx } from './selection.js';

export type FieldPlan =
  | { alias: string; kind: 'root'; plan: RootPlan }
  | { alias: string; kind: 'value'; value: unknown }
  | { alias: string; kind: 'introspect'; node: FieldNode };

export type OperationPlan =
  | { kind: 'response'; response: Record<string, unknown> }
  | { kind: 'fields'; operation: 'query' | 'mutation'; fields: FieldPlan[]; errors: string[] };

export function buildOperation(catalog: Catalog, op: OperationDefinitionNode, ctx: Ctx): OperationPlan {
  const operation = op.operation === 'mutation' ? 'mutation' : 'query';
  const typeName = operation === 'mutation' ? 'Mutation' : 'Query';
  if (operation === 'mutation' && rootFields(catalog).mutation.size === 0) {
    return { kind: 'response', response: { data: null, errors: [{ message: 'Unknown type Mutation' }] } };
  }
  const fields: FieldPlan[] = [];
  const errors: string[] = [];
  try {
    const top = topLevelFields(op, typeName, ctx);
    // pg_graphql (resolve.rs): a query answers this without `data`, a mutation fails as a whole.
    if (!top.length) throw new GraphQLEngineError('Selection set must not be empty', operation === 'query');
    for (const f of top) {
      try {
        if (f.name === '__typename') fields.push({ alias: f.alias, kind: 'value', value: typeName });
        else if ((f.name === '__schema' || f.name === '__type') && operation === 'query') {
          if (!catalog.introspection) throw new GraphQLEngineError(`Unknown field "${f.name}" on type Query`);
          fields.push({ alias: f.alias, kind: 'introspect', node: f.node });
        } else
          fields.push({ alias: f.alias, kind: 'root', plan: buildRootField(catalog, ctx, f, operation) });
      } catch (e) {
        if (!(e instanceof GraphQLEngineError) || e.requestLevel) throw e;
        if (operation === 'mutation')
          return { kind: 'response', response: { data: null, errors: [{ message: e.message }] } };
        errors.push(e.message);
      }
    }
  } catch (e) {
    if (!(e instanceof GraphQLEngineError)) throw e;
    const response = e.requestLevel ? {} : { data: null };
    return { kind: 'response', response: { ...response, errors: [{ message: e.message }] } };
  }
  return { kind: 'fields', operation, fields, errors };
}

/**
 * The operation's top-level fields. pg_graphql answers an error in normalizing them (a directive, a
 * fragment, a merge conflict) for the whole request, without `data` (resolve.rs); the same error
 * below a top-level field is that field's error.
 */
function topLevelFields(op: OperationDefinitionNode, typeName: string, ctx: Ctx) {
  try {
    return collectFields([op.selectionSet], typeName, ctx);
  } catch (e) {
    if (e instanceof GraphQLEngineError && !e.requestLevel) throw new GraphQLEngineError(e.message, true);
    throw e;
  }
}
