/**
 * pg_graphql's fragment-cycle check (resolve.rs, `detect_fragment_cycles`): before an operation is
 * chosen, every fragment definition of the document, used or not, is walked from its own
 * selection set into fields, inline fragments and spreads (the first definition of a spread's
 * name; unknown names are skipped). Meeting a fragment already on the path is "Found a cycle
 * between fragments"; going deeper than 50 (each definition, spread and field selection set is one
 * level) is "Fragment cycle depth is greater than 50". A cycle through relationship fields is a
 * cycle like any other, since fields are walked without looking at the schema.
 *
 * pg_graphql walks every path; shared fragments (A spreads B twice, B spreads C twice, ...) make
 * that exponential. Here a definition whose walk from depth d succeeded is not walked again from
 * any depth <= d: success means nothing it reaches leads back to it or runs out of depth, so the
 * outcome is the same whatever the path to it. Errors end the check, so the result is pg_graphql's.
 */
import { Kind, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import { GraphQLEngineError } from '../plan/errors.js';

const STACK_DEPTH_LIMIT = 50;

function tooDeep(): never {
  throw new GraphQLEngineError(`Fragment cycle depth is greater than ${STACK_DEPTH_LIMIT}`, true);
}

/** Throws pg_graphql's request-level error for the first fragment (in document order) that fails. */
export function checkFragmentCycles(definitions: readonly FragmentDefinitionNode[]): void {
  const byName = new Map<string, FragmentDefinitionNode>();
  for (const d of definitions) if (!byName.has(d.name.value)) byName.set(d.name.value, d);
  /** Per definition: the deepest depth its walk is known to succeed from. */
  const okFrom = new Map<FragmentDefinitionNode, number>();
  const onPath = new Set<string>();

  const fragment = (def: FragmentDefinitionNode, depth: number): void => {
    if (depth > STACK_DEPTH_LIMIT) tooDeep();
    if (onPath.has(def.name.value)) throw new GraphQLEngineError('Found a cycle between fragments', true);
    if ((okFrom.get(def) ?? 0) >= depth) return;
    onPath.add(def.name.value);
    selectionSet(def.selectionSet, depth + 1);
    onPath.delete(def.name.value);
    okFrom.set(def, depth);
  };

  const selectionSet = (set: SelectionSetNode | undefined, depth: number): void => {
    if (depth > STACK_DEPTH_LIMIT) tooDeep();
    for (const sel of set?.selections ?? []) {
      if (sel.kind === Kind.FIELD) selectionSet(sel.selectionSet, depth + 1);
      else if (sel.kind === Kind.INLINE_FRAGMENT) selectionSet(sel.selectionSet, depth + 1);
      else {
        const def = byName.get(sel.name.value);
        if (def) fragment(def, depth + 1);
      }
    }
  };

  for (const def of definitions) {
    onPath.clear();
    fragment(def, 1);
  }
}
