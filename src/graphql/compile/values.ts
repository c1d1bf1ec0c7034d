/** GraphQL input values (literals and variables) → plain JS values, with pg_graphql's validation wording. */
import { Kind, type ValueNode } from 'graphql';
import type { SqlType } from '../introspect/model.js';
import { fail } from './errors.js';

/** An enum literal (distinguished from a string so that `is: NULL` and mappings work). */
export class EnumLiteral {
  constructor(readonly name: string) {}
}

export type Vars = Record<string, unknown> & { [REQUIRED]?: Set<string>; [READS]?: Set<string> };

/** The names of the variables a compilation read (see execute/plan-template.ts). */
export const READS = Symbol('variables read');

/** Marks a string variable's placeholder value while a plan template is compiled (see execute/plan-template.ts). */
export const SENTINEL_PREFIX = '\u0001strata:var:';

/** Integer variables' placeholders while a plan template is compiled: this base plus a small index. */
export const INT_SENTINEL_BASE = 1_900_000_000;
let templating = false;

/** Runs a compilation of a plan template (numbers that shape SQL text then refuse placeholders). */
export function whileTemplating<T>(work: () => T): T {
  templating = true;
  try {
    return work();
  } finally {
    templating = false;
  }
}

/** A number that is written into SQL text (limit, offset, atMost): a placeholder must not make a template. */
export function structuralNumber(v: number): number {
  if (templating && v >= INT_SENTINEL_BASE && v < INT_SENTINEL_BASE + 1_000_000)
    fail('Invalid input for Int type');
  return v;
}

/** Variables declared non-null without a default: using one that is absent is an error. */
export const REQUIRED = Symbol('required variables');

/** Converts an AST value; an absent variable gives `undefined` (the argument is then ignored). */
export function inputValue(node: ValueNode, vars: Vars): unknown {
  switch (node.kind) {
    case Kind.VARIABLE: {
      const v = vars[node.name.value];
      vars[READS]?.add(node.name.value);
      if (v === undefined && vars[REQUIRED]?.has(node.name.value)) fail('Invalid input for NonNull type');
      return v;
    }
    case Kind.INT:
      return Number(node.value);
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.STRING:
      return node.value;
    case Kind.BOOLEAN:
      return node.value;
    case Kind.NULL:
      return null;
    case Kind.ENUM:
      return new EnumLiteral(node.value);
    case Kind.LIST:
      return node.values.map((v) => inputValue(v, vars));
    case Kind.OBJECT: {
      const o: Record<string, unknown> = {};
      for (const f of node.fields) {
        const v = inputValue(f.value, vars);
        if (v !== undefined) o[f.name.value] = v;
      }
      return o;
    }
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof EnumLiteral);
}

export function enumName(v: unknown): string | undefined {
  if (v instanceof EnumLiteral) return v.name;
  if (typeof v === 'string') return v;
  return undefined;
}

/** Validates a non-null scalar value for a SQL type and returns the text passed to Postgres. */
export function scalarText(t: SqlType, v: unknown): string {
  if (t.enumRef) {
    const name = enumName(v);
    const hit = t.enumRef.values.find((x) => x.name === name);
    if (!hit) fail(`Invalid input for ${t.enumRef.name} type`);
    return hit.label;
  }
  switch (t.scalar) {
    case 'Int':
      if (typeof v !== 'number' || !Number.isInteger(v)) fail('Invalid input for Int type');
      return String(v);
    case 'Float':
      if (typeof v !== 'number') fail('Invalid input for Float type');
      return String(v);
    case 'BigInt':
      if (typeof v === 'number' && Number.isInteger(v)) return String(v);
      if (typeof v !== 'string') fail('Invalid input for BigInt type');
      return v as string;
    case 'BigFloat':
      if (typeof v === 'number') fail('Invalid input for BigFloat type. String required');
      if (typeof v !== 'string') fail('Invalid input for BigFloat type');
      return v as string;
    case 'Boolean':
      if (typeof v !== 'boolean') fail('Invalid input for Boolean type');
      return v ? 'true' : 'false';
    case 'String':
      if (typeof v !== 'string') fail('Invalid input for String type');
      // A length-checked string depends on its value: a placeholder must not make a template.
      if (t.maxLength !== undefined && (v as string).startsWith(SENTINEL_PREFIX))
        fail('Invalid input for String type');
      if (t.maxLength !== undefined && [...(v as string)].length > t.maxLength)
        fail(`Invalid input for String type. Maximum character length ${t.maxLength}`);
      return v as string;
    case 'JSON':
      if (typeof v !== 'string') fail('Invalid input for JSON type');
      return v as string;
    case 'Opaque':
      if (v instanceof EnumLiteral) return v.name;
      if (typeof v === 'object') return JSON.stringify(v);
      return String(v);
    default:
      if (typeof v !== 'string') fail(`Invalid input for ${t.scalar} type`);
      return v as string;
  }
}

/** Text for a SQL value of type `t` (arrays become array literals via JSON → text[] conversion in SQL). */
export function sqlValue(t: SqlType, v: unknown): { text: string | null; array?: (string | null)[] } {
  if (v === null) return { text: null };
  if (t.isArray) {
    const list = Array.isArray(v) ? v : [v];
    const el: SqlType = { ...t, isArray: false };
    return { text: null, array: list.map((x) => (x === null ? null : scalarText(el, x))) };
  }
  return { text: scalarText(t, v) };
}
