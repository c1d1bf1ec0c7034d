/** Parsing (cached, once per request) and operation selection with pg_graphql's request-level errors. */
import {
  Kind,
  type DefinitionNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
} from 'graphql';
import { GraphQLEngineError } from '../plan/errors.js';
import { DEFAULTED, inputValue, type Vars } from '../plan/values.js';
import { checkFragmentCycles } from './fragment-cycles.js';
import { parseDocument } from './parse-document.js';

/** A request's document as parsed once: the AST, or the request-level error that parsing gave. */
export type ParsedDocument = DocumentNode | GraphQLEngineError;

const parsed = new Map<string, ParsedDocument>();
// Longer documents are parsed every time rather than kept (the cache's memory stays bounded).
const CACHEABLE_LENGTH = 64 * 1024;

/**
 * Parses `query` (cached by text). The HTTP layer parses a request's document here once, for its
 * own checks, and hands the result to the engine with the request.
 */
export function parseRequestDocument(query: string): ParsedDocument {
  let hit = parsed.get(query);
  if (!hit) {
    try {
      hit = parseDocument(query);
    } catch (e) {
      hit = new GraphQLEngineError((e as Error).message, true);
    }
    if (query.length <= CACHEABLE_LENGTH) {
      if (parsed.size > 2000) parsed.clear();
      parsed.set(query, hit);
    }
  }
  return hit;
}

/**
 * Fragment name → type condition → the first definition of that name on that type, the one a
 * spread uses (pg_graphql's normalize_selection); names may repeat, on different types or the
 * same one. Inner maps keep document order.
 */
export type Fragments = Map<string, Map<string, FragmentDefinitionNode>>;

export function fragmentsByName(definitions: readonly DefinitionNode[]): Fragments {
  const fragments: Fragments = new Map();
  for (const d of definitions) {
    if (d.kind !== Kind.FRAGMENT_DEFINITION) continue;
    let byType = fragments.get(d.name.value);
    if (!byType) {
      byType = new Map();
      fragments.set(d.name.value, byType);
    }
    if (!byType.has(d.typeCondition.name.value)) byType.set(d.typeCondition.name.value, d);
  }
  return fragments;
}

export interface Operation {
  op: OperationDefinitionNode;
  fragments: Fragments;
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
  const fragmentDefs = doc.definitions.filter(
    (d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION,
  );
  const fragments = fragmentsByName(fragmentDefs);
  // pg_graphql's checks, in its order (resolve.rs `resolve_inner`). A subscription counts as
  // unnamed there (only queries and mutations have their names read).
  const names = ops.map((o) => (o.operation === 'subscription' ? undefined : o.name?.value));
  if (ops.length > 1 && names.some((n) => n === undefined))
    throw new GraphQLEngineError('Anonymous operations must be the only defined operation', true);
  if (new Set(names).size !== names.length)
    throw new GraphQLEngineError('Operation names must be unique', true);
  checkFragmentCycles(fragmentDefs);
  const op =
    operationName !== null && operationName !== undefined
      ? ops.find((_, i) => names[i] === operationName)
      : ops.length === 1
        ? ops[0]
        : undefined;
  if (!op) throw new GraphQLEngineError('Operation not found', true);
  if (op.operation === 'subscription') throw new GraphQLEngineError('Subscriptions are not supported', true);
  const vars: Vars = { ...((variables as Vars | null) ?? {}) };
  const declared = new Set<string>();
  for (const def of op.variableDefinitions ?? []) {
    const name = def.variable.name.value;
    // A repeated declaration: pg_graphql reads the first one's default (to_gson finds it by name).
    if (declared.has(name)) continue;
    declared.add(name);
    if (vars[name] === undefined && def.defaultValue) {
      vars[name] = inputValue(def.defaultValue, {});
      vars[DEFAULTED] ??= new Set();
      vars[DEFAULTED].add(name);
    }
  }
  return { op, fragments, vars };
}
