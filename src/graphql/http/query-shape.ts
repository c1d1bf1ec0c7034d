/**
 * What the HTTP layer needs to know about a document before the engine runs it: its selection
 * depth (depth limit), how many field selections it makes (width limit) and the type of the
 * operation it would run (no mutations over GET). It reads the document the request parsed once
 * (execute/document.ts), which is then handed to the engine; parse failures are left to the
 * engine, which reports them in its own words.
 */
import { Kind, type DocumentNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import { fragmentsByName, type Fragments } from '../execute/document.js';

export interface QueryShape {
  /** Deepest field nesting of the selected operation (fragments inlined; introspection subtrees count as one level). */
  depth: number;
  /**
   * Field selections of the selected operation at every level, each fragment spread counted as
   * the fields it brings (so fragments cannot hide width); capped at Number.MAX_SAFE_INTEGER.
   */
  selections: number;
  /**
   * Most list-valued introspection fields (`types`, `fields`, `args`, ...) nested on one path under
   * `__schema`/`__type`: each multiplies the answer (the standard introspection query nests 3).
   */
  introspectionLists: number;
  /** 'query' | 'mutation' | 'subscription', or undefined when the operation cannot be chosen. */
  operation?: string;
}

interface Measure {
  depth: number;
  selections: number;
  /** List-field nesting of this subtree as if it were under an introspection root. */
  lists: number;
  /** List-field nesting found under an introspection root inside this subtree. */
  introspectionLists: number;
}

const INTROSPECTION_ROOTS = new Set(['__schema', '__type']);
const INTROSPECTION_LISTS = new Set([
  'types',
  'fields',
  'args',
  'inputFields',
  'interfaces',
  'possibleTypes',
  'enumValues',
  'directives',
]);
const EMPTY: Measure = { depth: 0, selections: 0, lists: 0, introspectionLists: 0 };

/**
 * Depth and width of selection sets, each fragment measured once (a document whose fragments
 * spread each other many times over costs its size, not the size of its expansion). A spread of
 * a fragment already being measured (a cycle, which the engine reports) counts as nothing.
 * Recursion is bounded by the document's nesting (parse-document.ts).
 */
class Measurer {
  private readonly done = new Map<string, Measure>();
  private readonly visiting = new Set<string>();

  constructor(private readonly fragments: Fragments) {}

  set(set: SelectionSetNode): Measure {
    let depth = 0;
    let selections = 0;
    let lists = 0;
    let introspectionLists = 0;
    for (const sel of set.selections) {
      let m: Measure;
      if (sel.kind === Kind.FIELD) {
        const inner = sel.selectionSet ? this.set(sel.selectionSet) : EMPTY;
        const root = INTROSPECTION_ROOTS.has(sel.name.value);
        m = {
          depth: 1 + (root ? 0 : inner.depth),
          selections: 1 + inner.selections,
          lists: inner.lists + (INTROSPECTION_LISTS.has(sel.name.value) && sel.selectionSet ? 1 : 0),
          introspectionLists: root ? inner.lists : inner.introspectionLists,
        };
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        m = this.set(sel.selectionSet);
      } else {
        m = this.fragment(sel.name.value);
      }
      depth = Math.max(depth, m.depth);
      selections = Math.min(selections + m.selections, Number.MAX_SAFE_INTEGER);
      lists = Math.max(lists, m.lists);
      introspectionLists = Math.max(introspectionLists, m.introspectionLists);
    }
    return { depth, selections, lists, introspectionLists };
  }

  private fragment(name: string): Measure {
    const known = this.done.get(name);
    if (known) return known;
    const defs = this.fragments.get(name);
    if (!defs || this.visiting.has(name)) return EMPTY;
    this.visiting.add(name);
    // A name may have a definition per type (the engine picks by type): the largest counts.
    let m = EMPTY;
    for (const d of defs.values()) {
      const x = this.set(d.selectionSet);
      m = {
        depth: Math.max(m.depth, x.depth),
        selections: Math.max(m.selections, x.selections),
        lists: Math.max(m.lists, x.lists),
        introspectionLists: Math.max(m.introspectionLists, x.introspectionLists),
      };
    }
    this.visiting.delete(name);
    this.done.set(name, m);
    return m;
  }
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
  const fragments = fragmentsByName(doc.definitions);
  const op = chooseOperation(doc, operationName);
  // Without a chosen operation (the engine will say why), the largest one counts.
  const ops = op
    ? [op]
    : doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const measurer = new Measurer(fragments);
  const measures = ops.map((o) => measurer.set(o.selectionSet));
  return {
    depth: Math.max(0, ...measures.map((m) => m.depth)),
    selections: Math.max(0, ...measures.map((m) => m.selections)),
    introspectionLists: Math.max(0, ...measures.map((m) => m.introspectionLists)),
    operation: op?.operation,
  };
}

/** Per parsed document (parses are cached by text), per operation name: its shape. */
const cache = new WeakMap<DocumentNode, Map<string, QueryShape>>();

/** The shape of `doc` for `operationName`. */
export function queryShape(doc: DocumentNode, operationName: string | null | undefined): QueryShape {
  let byName = cache.get(doc);
  if (!byName) {
    byName = new Map();
    cache.set(doc, byName);
  }
  const key = operationName ?? '';
  let shape = byName.get(key);
  if (!shape) {
    shape = shapeOf(doc, operationName);
    // A document names few operations; an unknown name asked for again and again is not kept.
    if (byName.size < 16) byName.set(key, shape);
  }
  return shape;
}
