/**
 * A subscription request → the engine request that answers it: the same document with the
 * operation made a `query`, so the Subscription field runs as the Query field of the same name
 * (same planner, same transpiler, one statement, as the subscriber's role and claims).
 */
import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  print,
  type DocumentNode,
  type OperationDefinitionNode,
} from 'graphql';
import { parseDocument } from '../graphql/execute/parse-document.js';
import { queryShape } from '../graphql/http/query-shape.js';
import type { RequestLimits } from '../graphql/http/options.js';

export interface LiveRequest {
  /** The query text the engine runs (and the multiplexer's key). */
  query: string;
  operationName: string | null;
  variables: Record<string, unknown> | null;
  /** The one top-level field, which must be a field of the Subscription root. */
  field: string;
  /** The subscription as sent (graphql-ws reads its operation). */
  document: DocumentNode;
}

export interface SubscribePayload {
  query?: unknown;
  operationName?: unknown;
  variables?: unknown;
}

/** A subscription as an engine query, or the errors that refuse it. */
/**
 * `limits` are the HTTP API's (STRATA_GRAPHQL_MAX_DEPTH, STRATA_GRAPHQL_MAX_SELECTIONS), with its
 * words; the document is parsed with the engine's bounds (execute/parse-document.ts).
 */
export function liveRequestOf(
  payload: SubscribePayload,
  limits: RequestLimits,
): LiveRequest | GraphQLError[] {
  const refuse = (message: string) => [new GraphQLError(message)];
  if (typeof payload.query !== 'string') return refuse('A subscription needs a query string');
  const variables = payload.variables ?? null;
  if (variables !== null && (typeof variables !== 'object' || Array.isArray(variables)))
    return refuse('variables must be an object');
  const operationName = payload.operationName ?? null;
  if (operationName !== null && typeof operationName !== 'string')
    return refuse('operationName must be a string');
  let doc: DocumentNode;
  try {
    doc = parseDocument(payload.query);
  } catch (e) {
    return [e instanceof GraphQLError ? e : new GraphQLError(String(e))];
  }
  const op = operationOf(doc, operationName);
  if (!op) return refuse('Operation not found');
  if (op.operation !== 'subscription')
    return refuse(
      `Only subscriptions are served over this connection (got a ${op.operation}); send queries and mutations over HTTP`,
    );
  const top = op.selectionSet.selections;
  const first = top[0];
  if (top.length !== 1 || first?.kind !== Kind.FIELD || first.name.value.startsWith('__'))
    return refuse('A subscription selects exactly one top-level field of the Subscription type');
  const shape = queryShape(doc, op.name?.value ?? null);
  if (limits.maxDepth !== false && shape.depth > limits.maxDepth)
    return refuse(`Query depth ${shape.depth} exceeds the maximum allowed depth of ${limits.maxDepth}`);
  if (limits.maxSelections !== false && shape.selections > limits.maxSelections)
    return refuse(
      `Query selection count ${shape.selections} exceeds the maximum allowed selection count of ${limits.maxSelections}`,
    );
  const asQuery: OperationDefinitionNode = { ...op, operation: OperationTypeNode.QUERY };
  const fragments = doc.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
  const query = print({ kind: Kind.DOCUMENT, definitions: [asQuery, ...fragments] });
  return {
    query,
    operationName: op.name?.value ?? null,
    variables: variables as Record<string, unknown> | null,
    field: first.name.value,
    document: doc,
  };
}

/** The operation a request names (null or undefined: the only one), as GraphQL over HTTP picks it. */
export function operationOf(
  doc: DocumentNode,
  operationName: string | null | undefined,
): OperationDefinitionNode | undefined {
  const ops = doc.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  if (operationName === null || operationName === undefined) return ops.length === 1 ? ops[0] : undefined;
  return ops.find((o) => o.name?.value === operationName);
}
