/** Parsing (cached) and operation selection with pg_graphql's request-level errors. */
import {
  Kind,
  parse,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
} from 'graphql';
import { GraphQLEngineError } from '../compile/errors.js';
import { READS, REQUIRED, inputValue, type Vars } from '../compile/values.js';

const parsed = new Map<string, DocumentNode | GraphQLEngineError>();

export function parseCached(query: string): DocumentNode {
  let hit = parsed.get(query);
  if (!hit) {
    try {
      hit = parse(query, { noLocation: true });
    } catch (e) {
      hit = new GraphQLEngineError((e as Error).message, true);
    }
    if (parsed.size > 2000) parsed.clear();
    parsed.set(query, hit);
  }
  if (hit instanceof GraphQLEngineError) throw hit;
  return hit;
}

export interface Operation {
  op: OperationDefinitionNode;
  fragments: Map<string, FragmentDefinitionNode>;
  vars: Vars;
}

export function selectOperation(
  doc: DocumentNode,
  operationName: string | null | undefined,
  variables: unknown,
): Operation {
  if (
    variables !== null &&
    variables !== undefined &&
    (typeof variables !== 'object' || Array.isArray(variables))
  ) {
    throw new GraphQLEngineError('variables must be an object', true);
  }
  const ops = doc.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const names = ops.filter((o) => o.name).map((o) => o.name!.value);
  if (new Set(names).size !== names.length)
    throw new GraphQLEngineError('Operation names must be unique', true);
  let op: OperationDefinitionNode | undefined;
  if (operationName) {
    op = ops.find((o) => o.name?.value === operationName);
  } else if (ops.length > 1 && ops.some((o) => !o.name)) {
    throw new GraphQLEngineError('Anonymous operations must be the only defined operation', true);
  } else {
    op = ops.length === 1 ? ops[0] : undefined;
  }
  if (!op) throw new GraphQLEngineError('Operation not found', true);
  if (op.operation === 'subscription') throw new GraphQLEngineError('Subscriptions are not supported', true);
  const vars: Vars = { ...((variables as Vars | null) ?? {}) };
  vars[READS] = new Set();
  for (const def of op.variableDefinitions ?? []) {
    const name = def.variable.name.value;
    if (vars[name] === undefined && def.defaultValue) vars[name] = inputValue(def.defaultValue, {});
    if (def.type.kind === Kind.NON_NULL_TYPE && !def.defaultValue) {
      vars[REQUIRED] ??= new Set();
      vars[REQUIRED].add(name);
    }
  }
  return { op, fragments, vars };
}
