/**
 * Plans whose answer is the same under every schema version: a query that selects only
 * `__typename` at its root (`{ __typename }`, a common health check), with no fragments, variables,
 * directives or arguments that a schema could make invalid. Its answer is `"Query"` whatever the
 * catalog holds, so it needs neither a statement nor the schema-version check.
 */
import { Kind } from 'graphql';
import type { Plan } from './plan.js';

export function isSchemaFree(plan: Plan): boolean {
  if (plan.kind !== 'plan' || plan.operation !== 'query' || plan.errors.length) return false;
  if (!plan.items.every((i) => i.kind === 'value')) return false;
  const { op, fragments } = plan.op;
  if (fragments.size || op.variableDefinitions?.length || op.directives?.length) return false;
  return op.selectionSet.selections.every(
    (s) =>
      s.kind === Kind.FIELD &&
      s.name.value === '__typename' &&
      !s.directives?.length &&
      !s.arguments?.length &&
      !s.selectionSet,
  );
}
