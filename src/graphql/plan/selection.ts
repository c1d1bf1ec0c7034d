/** Selection sets → flat, merged field lists (fragments, inline fragments, @skip/@include, aliases). */
import {
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type DirectiveNode,
  type ArgumentNode,
  type ValueNode,
} from 'graphql';
import { GraphQLEngineError, debugList, fail } from './errors.js';
import { DEFAULTED, inputValue, type TemplateReads, type Vars } from './values.js';

export interface Field {
  alias: string;
  name: string;
  node: FieldNode;
  /** Merged sub-selection (all selection sets of fields merged under this response key). */
  selections: SelectionSetNode[];
}

export interface Ctx {
  /** Fragment name → type condition → the definition a spread uses (execute/document.ts). */
  fragments: Map<string, Map<string, FragmentDefinitionNode>>;
  vars: Vars;
  /**
   * Set while a plan is built for reuse (execute/plan-template.ts): the string and integer
   * variables to read as VarScalar, and what was read.
   */
  template?: TemplateReads;
}

/**
 * pg_graphql's `selection_is_skipped` (parser_util.rs): only @skip and @include, each with exactly
 * one argument named `if`; a literal that is not a boolean is ignored, and a variable is read from
 * the request's variables as sent (its default in the operation does not count).
 */
function included(directives: readonly DirectiveNode[] | undefined, ctx: Ctx): boolean {
  for (const d of directives ?? []) {
    const name = d.name.value;
    if (name !== 'skip' && name !== 'include') fail(`Unknown directive ${name}`);
    const args = d.arguments ?? [];
    if (args.length !== 1) fail(`Incorrect arguments to directive @${name}`);
    const arg = args[0] as ArgumentNode;
    if (arg.name.value !== 'if') fail(`Unknown argument to @${name}: ${arg.name.value}`);
    let v: unknown;
    if (arg.value.kind === Kind.BOOLEAN) v = arg.value.value;
    else if (arg.value.kind === Kind.VARIABLE) {
      const varName = arg.value.name.value;
      v = ctx.vars[DEFAULTED]?.has(varName) ? undefined : ctx.vars[varName];
      if (typeof v !== 'boolean') fail(`Value for "if" in @${name} directive is required`);
    }
    if (name === 'skip' && v === true) return false;
    if (name === 'include' && v === false) return false;
  }
  return true;
}

/**
 * pg_graphql's argument comparison for merging (merge.rs `same_arguments`): as many arguments on
 * each side, and each of the second's found by name among the first's with an equal value, values
 * compared as written (a variable by its name, an object's fields in any order).
 */
function sameArguments(a: readonly ArgumentNode[], b: readonly ArgumentNode[]): boolean {
  if (a.length !== b.length) return false;
  const byName = new Map(a.map((x) => [x.name.value, x.value]));
  return b.every((x) => {
    const v = byName.get(x.name.value);
    return v !== undefined && sameValue(v, x.value);
  });
}

function sameValue(a: ValueNode, b: ValueNode): boolean {
  switch (a.kind) {
    case Kind.VARIABLE:
      return b.kind === a.kind && b.name.value === a.name.value;
    case Kind.INT:
      return b.kind === a.kind && BigInt(b.value) === BigInt(a.value);
    case Kind.FLOAT:
      return b.kind === a.kind && Number(b.value) === Number(a.value);
    case Kind.STRING:
    case Kind.ENUM:
      return b.kind === a.kind && b.value === a.value;
    case Kind.BOOLEAN:
      return b.kind === a.kind && b.value === a.value;
    case Kind.NULL:
      return b.kind === a.kind;
    case Kind.LIST:
      return (
        b.kind === a.kind &&
        b.values.length === a.values.length &&
        a.values.every((x, i) => sameValue(x, b.values[i] as ValueNode))
      );
    case Kind.OBJECT: {
      if (b.kind !== a.kind) return false;
      // An object's fields are a map in pg_graphql's parser: a repeated name keeps its last value.
      const fa = new Map(a.fields.map((f) => [f.name.value, f.value]));
      const fb = new Map(b.fields.map((f) => [f.name.value, f.value]));
      if (fa.size !== fb.size) return false;
      for (const [k, v] of fa) {
        const w = fb.get(k);
        if (w === undefined || !sameValue(v, w)) return false;
      }
      return true;
    }
  }
}

/**
 * Flattens a selection set for an object of type `typeName`, as pg_graphql's
 * normalize_selection_set: every selection is expanded first (directives, fragments), then fields
 * with one response key are merged in document order, the later field named first when their names
 * differ. A fragment applies only on its own type: an inline one on another type (an interface
 * included) is left out, a spread of one is an error, as is a spread of a missing fragment.
 */
export function collectFields(sets: SelectionSetNode[], typeName: string, ctx: Ctx): Field[] {
  const flat: FieldNode[] = [];
  // Cycles and fragment depth were checked for the whole document (execute/fragment-cycles.ts);
  // inline fragments nest as deep as the parser allows (execute/parse-document.ts).
  const visit = (set: SelectionSetNode, seen: Set<string>) => {
    for (const sel of set.selections) {
      if (!included(sel.directives, ctx)) continue;
      if (sel.kind === Kind.FIELD) flat.push(sel);
      else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const cond = sel.typeCondition?.name.value;
        if (cond === undefined || cond === typeName) visit(sel.selectionSet, seen);
      } else {
        const name = sel.name.value;
        // pg_graphql (parser_util.rs normalize_selection): the first definition of that name on
        // this type; names may repeat across (or within) types.
        const frag = ctx.fragments.get(name)?.get(typeName);
        if (!frag) fail(`no fragment named ${name} on type ${typeName}`);
        if (seen.has(name)) throw new GraphQLEngineError('Found a cycle between fragments', true);
        visit(frag.selectionSet, new Set([...seen, name]));
      }
    }
  };
  for (const s of sets) visit(s, new Set());
  const out = new Map<string, Field>();
  for (const sel of flat) {
    const alias = sel.alias?.value ?? sel.name.value;
    const prev = out.get(alias);
    if (prev) {
      if (prev.name !== sel.name.value)
        fail(`Fields \`${sel.name.value}\` and \`${prev.name}\` are different`);
      if (!sameArguments(sel.arguments ?? [], prev.node.arguments ?? []))
        fail(`Two fields named \`${sel.name.value}\` have different arguments`);
      if (sel.selectionSet) prev.selections.push(sel.selectionSet);
    } else {
      out.set(alias, {
        alias,
        name: sel.name.value,
        node: sel,
        selections: sel.selectionSet ? [sel.selectionSet] : [],
      });
    }
  }
  return [...out.values()];
}

/**
 * Arguments of a field as JS values (absent variables dropped). With `allowed`, arguments it does
 * not name are refused all together, in document order (pg_graphql's restrict_allowed_arguments).
 */
export function argsOf(field: Field, ctx: Ctx, allowed?: string[]): Record<string, unknown> {
  const given = field.node.arguments ?? [];
  if (allowed) {
    const extra = given.map((a) => a.name.value).filter((n) => !allowed.includes(n));
    if (extra.length) fail(`Input contains extra keys ${debugList(extra)}`);
  }
  const out: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (const a of given) {
    // A repeated argument: pg_graphql reads the first one (read_argument finds it by name).
    if (seen.has(a.name.value)) continue;
    seen.add(a.name.value);
    const v = inputValue(a.value, ctx.vars, ctx.template);
    if (v !== undefined) out[a.name.value] = v;
  }
  return out;
}
