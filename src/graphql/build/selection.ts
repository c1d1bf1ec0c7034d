/** Selection sets → flat, merged field lists (fragments, inline fragments, @skip/@include, aliases). */
import {
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type DirectiveNode,
  type ArgumentNode,
} from 'graphql';
import { GraphQLEngineError, fail } from './errors.js';
import { inputValue, type Vars } from './values.js';

export interface Field {
  alias: string;
  name: string;
  node: FieldNode;
  /** Merged sub-selection (all selection sets of fields merged under this response key). */
  selections: SelectionSetNode[];
}

export interface Ctx {
  fragments: Map<string, FragmentDefinitionNode>;
  vars: Vars;
}

function included(directives: readonly DirectiveNode[] | undefined, ctx: Ctx): boolean {
  for (const d of directives ?? []) {
    if (d.name.value !== 'skip' && d.name.value !== 'include') continue;
    const arg = d.arguments?.find((a) => a.name.value === 'if');
    let v: unknown;
    try {
      v = arg ? inputValue(arg.value, ctx.vars) : undefined;
    } catch {
      v = undefined;
    }
    if (typeof v !== 'boolean') fail(`Value for "if" in @${d.name.value} directive is required`);
    if (d.name.value === 'skip' && v) return false;
    if (d.name.value === 'include' && !v) return false;
  }
  return true;
}

function argsKey(args: readonly ArgumentNode[] | undefined): string {
  return JSON.stringify((args ?? []).map((a) => [a.name.value, stripLoc(a.value)]).sort());
}

function stripLoc(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripLoc);
  if (v && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (k !== 'loc') o[k] = stripLoc(x);
    return o;
  }
  return v;
}

/**
 * Flattens a selection set for an object of type `typeName` (`also` lists other type names a
 * fragment's type condition may use, such as interfaces).
 */
export function collectFields(
  sets: SelectionSetNode[],
  typeName: string,
  ctx: Ctx,
  also: string[] = [],
): Field[] {
  const out = new Map<string, Field>();
  const keys = new Map<string, string>();
  const matches = (cond: string | undefined) => !cond || cond === typeName || also.includes(cond);
  // Cycles and fragment depth were checked for the whole document (execute/fragment-cycles.ts);
  // inline fragments nest as deep as the parser allows (execute/parse-document.ts).
  const visit = (set: SelectionSetNode, seen: Set<string>) => {
    for (const sel of set.selections) {
      if (!included(sel.directives, ctx)) continue;
      if (sel.kind === Kind.FIELD) {
        const alias = sel.alias?.value ?? sel.name.value;
        const prev = out.get(alias);
        if (prev) {
          if (prev.name !== sel.name.value)
            fail(`Fields \`${prev.name}\` and \`${sel.name.value}\` are different`);
          if (keys.get(alias) !== argsKey(sel.arguments))
            throw new GraphQLEngineError(`Two fields named \`${alias}\` have different arguments`, true);
          if (sel.selectionSet) prev.selections.push(sel.selectionSet);
        } else {
          out.set(alias, {
            alias,
            name: sel.name.value,
            node: sel,
            selections: sel.selectionSet ? [sel.selectionSet] : [],
          });
          keys.set(alias, argsKey(sel.arguments));
        }
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        if (matches(sel.typeCondition?.name.value)) visit(sel.selectionSet, seen);
      } else {
        const name = sel.name.value;
        const frag = ctx.fragments.get(name);
        if (!frag) fail(`Unknown fragment "${name}"`);
        if (seen.has(name)) throw new GraphQLEngineError('Found a cycle between fragments', true);
        if (matches(frag.typeCondition.name.value)) visit(frag.selectionSet, new Set([...seen, name]));
      }
    }
  };
  for (const s of sets) visit(s, new Set());
  return [...out.values()];
}

/** Arguments of a field as JS values (absent variables dropped). Unknown argument names are reported. */
export function argsOf(field: Field, ctx: Ctx, allowed?: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const a of field.node.arguments ?? []) {
    if (allowed && !allowed.includes(a.name.value))
      fail(`Input contains extra keys ${JSON.stringify([a.name.value])}`);
    const v = inputValue(a.value, ctx.vars);
    if (v !== undefined) out[a.name.value] = v;
  }
  return out;
}
