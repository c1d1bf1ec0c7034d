/**
 * What the HTTP layer needs to know about a document before the engine runs it: its selection
 * depth (for the depth limit) and the type of the operation it would run (no mutations over GET).
 * Parse failures are left to the engine, which reports them in its own words.
 */
import {
  Kind,
  parse,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

export interface QueryShape {
  /** Deepest field nesting of the selected operation (fragments inlined; introspection subtrees count as one level). */
  depth: number;
  /** 'query' | 'mutation' | 'subscription', or undefined when the operation cannot be chosen. */
  operation?: string;
}

const INTROSPECTION_ROOTS = new Set(['__schema', '__type']);

function selectionDepth(
  set: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  visiting: Set<string>,
): number {
  let max = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      const inner =
        sel.selectionSet && !INTROSPECTION_ROOTS.has(sel.name.value)
          ? selectionDepth(sel.selectionSet, fragments, visiting)
          : 0;
      max = Math.max(max, 1 + inner);
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      max = Math.max(max, selectionDepth(sel.selectionSet, fragments, visiting));
    } else {
      const name = sel.name.value;
      const frag = fragments.get(name);
      // A cycle is the engine's error to report; stop walking it here.
      if (!frag || visiting.has(name)) continue;
      visiting.add(name);
      max = Math.max(max, selectionDepth(frag.selectionSet, fragments, visiting));
      visiting.delete(name);
    }
  }
  return max;
}

function chooseOperation(
  doc: DocumentNode,
  operationName: string | null | undefined,
): OperationDefinitionNode | undefined {
  const ops = doc.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  if (operationName) return ops.find((o) => o.name?.value === operationName);
  return ops.length === 1 ? ops[0] : undefined;
}

function shapeOf(doc: DocumentNode, operationName: string | null | undefined): QueryShape {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const op = chooseOperation(doc, operationName);
  // Without a chosen operation (the engine will say why), the deepest one counts.
  const ops = op
    ? [op]
    : doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const depth = Math.max(0, ...ops.map((o) => selectionDepth(o.selectionSet, fragments, new Set())));
  return { depth, operation: op?.operation };
}

const CACHE_SIZE = 1000;
// Longer documents are parsed every time rather than kept.
const CACHEABLE_LENGTH = 16 * 1024;
const cache = new Map<string, QueryShape | null>();

/** The shape of `query` for `operationName`, or null when it does not parse. Cached by text. */
export function queryShape(query: string, operationName: string | null | undefined): QueryShape | null {
  const key = `${operationName ?? ''}\u0000${query}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  let shape: QueryShape | null;
  try {
    shape = shapeOf(parse(query, { noLocation: true }), operationName);
  } catch {
    shape = null;
  }
  if (query.length <= CACHEABLE_LENGTH) {
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(key, shape);
  }
  return shape;
}
