/**
 * GraphQL input values (literals and variables) → plain JS values, and values → parameters, with
 * pg_graphql's validation wording.
 */
import { Kind, type ValueNode } from 'graphql';
import type { SqlType } from '../introspect/model.js';
import { fail } from './errors.js';
import type { Param } from './plan-types.js';

/** An enum literal (distinguished from a string so that `is: NULL` and mappings work). */
export class EnumLiteral {
  constructor(readonly name: string) {}
}

/**
 * A string or integer variable's value as read while a plan is built for reuse (see
 * execute/plan-template.ts): only parameter sinks (paramOf) take it as a whole parameter and
 * mark it `used`; every other reader sees an object, not a string or number, and fails, which
 * makes the plan not reusable (it is then built again for the plain values).
 */
export class VarScalar {
  used = false;
  constructor(
    readonly name: string,
    readonly value: string | number,
  ) {}
}

/** The variables that are read as VarScalar while a reusable plan is built, and what was read. */
export interface TemplateReads {
  names: ReadonlySet<string>;
  reads: VarScalar[];
}

export type Vars = Record<string, unknown> & { [DEFAULTED]?: Set<string> };

/**
 * Variables absent from the request whose value is their default in the operation. pg_graphql
 * reads a variable's default only where it converts an argument (parser_util.rs `to_gson`), not in
 * @skip/@include; a declared type is never checked (an absent `$x: Int!` is just absent).
 */
export const DEFAULTED = Symbol('defaulted variables');

/**
 * Converts an AST value; an absent variable gives `undefined` (the argument is then ignored).
 * With `template` (a plan built for reuse), its variables are read as VarScalar and recorded.
 */
export function inputValue(node: ValueNode, vars: Vars, template?: TemplateReads): unknown {
  switch (node.kind) {
    case Kind.VARIABLE: {
      const name = node.name.value;
      const v = vars[name];
      if (template?.names.has(name) && (typeof v === 'string' || typeof v === 'number')) {
        const w = new VarScalar(name, v);
        template.reads.push(w);
        return w;
      }
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
      return node.values.map((v) => inputValue(v, vars, template));
    case Kind.OBJECT: {
      const o: Record<string, unknown> = {};
      for (const f of node.fields) {
        const v = inputValue(f.value, vars, template);
        if (v !== undefined) o[f.name.value] = v;
      }
      return o;
    }
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return (
    !!v &&
    typeof v === 'object' &&
    !Array.isArray(v) &&
    !(v instanceof EnumLiteral) &&
    !(v instanceof VarScalar)
  );
}

export function enumName(v: unknown): string | undefined {
  if (v instanceof EnumLiteral) return v.name;
  if (typeof v === 'string') return v;
  return undefined;
}

/** Validates a non-null scalar value for a SQL type and returns the text passed to Postgres. */
export function scalarText(t: SqlType, value: unknown): string {
  const v = value instanceof VarScalar ? value.value : value;
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

/**
 * A parameter of type `t` (cast to `cast`) holding `v`. A variable's value that any other value
 * of its kind would pass the same way (not an enum name, not a length-checked string) stays
 * that variable's parameter.
 */
export function paramOf(t: SqlType, v: unknown, cast: string): Param {
  if (v === null) return { text: null, cast };
  const text = scalarText(t, v);
  if (v instanceof VarScalar && !t.enumRef && !(t.scalar === 'String' && t.maxLength !== undefined)) {
    v.used = true;
    return { text, cast, variable: v.name };
  }
  return { text, cast };
}

/** A text[] parameter (elements as text, nulls kept) cast to `cast`. */
export function arrayParamOf(t: SqlType, list: unknown[], cast: string): Param {
  const el: SqlType = { ...t, isArray: false };
  return { text: toArrayLiteral(list.map((x) => (x === null ? null : scalarText(el, x)))), cast };
}

/** A value of SQL type `t` as a parameter cast to its type (a non-list value given for a list is a one-item list). */
export function valueParam(t: SqlType, v: unknown): Param {
  if (v === null) return { text: null, cast: t.castName };
  if (t.isArray) return arrayParamOf(t, Array.isArray(v) ? v : [v], t.castName);
  return paramOf(t, v, t.castName);
}

/** A PostgreSQL array literal of text elements. */
export function toArrayLiteral(items: (string | null)[]): string {
  return (
    '{' +
    items
      .map((s) => (s === null ? 'NULL' : '"' + s.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"'))
      .join(',') +
    '}'
  );
}
