/**
 * `__schema` / `__type` root fields, executed by graphql-js against the reflected schema
 * (runIntrospectionField), then shaped as pg_graphql answers them: its `__typename`s inside
 * introspection (rewriteIntrospectionTypename, restoreSchemaTypename) and its rendering of the
 * meta-types (toPgGraphqlDialect).
 */
import {
  execute,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
} from 'graphql';
import { BUILTIN_SCALAR_DESCRIPTIONS } from '../schema/shared-types.js';
import type { Operation } from './document.js';

export async function runIntrospectionField(
  schema: GraphQLSchema,
  operation: Operation,
  node: FieldNode,
  variables: Record<string, unknown>,
): Promise<unknown> {
  const document: DocumentNode = {
    kind: Kind.DOCUMENT,
    definitions: [
      {
        ...operation.op,
        operation: 'query' as never,
        selectionSet: { kind: Kind.SELECTION_SET, selections: [node] },
      },
      // graphql-js knows one definition per name: the first in the document.
      ...[...operation.fragments.values()].map(
        (byType) => byType.values().next().value as FragmentDefinitionNode,
      ),
    ],
  };
  const result = await execute({
    schema,
    document: rewriteIntrospectionTypename(schema, document),
    variableValues: variables,
  });
  const firstError = result.errors?.[0];
  if (firstError) throw new Error(firstError.message);
  const alias = node.alias?.value ?? node.name.value;
  return toPgGraphqlDialect(restoreSchemaTypename(result.data?.[alias] ?? null));
}

/**
 * pg_graphql's `__typename` inside introspection: on a `__Type`, `__Field`, `__InputValue` or
 * `__EnumValue` it answers the described thing's own name (null for a LIST/NON_NULL wrapper), on
 * `__Schema` the root field's name (`__schema`), on `__Directive` "__Directive" (as graphql-js).
 * graphql-js answers the meta-type's name, so the document is rewritten before it runs: those
 * `__typename`s become `name` under the same response key, and `__Schema`'s gets a marked key
 * that `restoreSchemaTypename` turns back into `__typename: "__schema"`.
 */
const NAMED_BY_OWN_NAME = new Set(['__Type', '__Field', '__InputValue', '__EnumValue']);
const SCHEMA_MARK = '__strata_schema_typename__';

function rewriteIntrospectionTypename(schema: GraphQLSchema, document: DocumentNode): DocumentNode {
  const typeInfo = new TypeInfo(schema);
  return visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node: FieldNode): FieldNode | undefined {
        if (node.name.value !== '__typename') return undefined;
        const parent = typeInfo.getParentType()?.name;
        const key = node.alias?.value ?? '__typename';
        if (parent && NAMED_BY_OWN_NAME.has(parent))
          return {
            ...node,
            alias: { kind: Kind.NAME, value: key },
            name: { kind: Kind.NAME, value: 'name' },
          };
        if (parent === '__Schema')
          return { ...node, alias: { kind: Kind.NAME, value: `${SCHEMA_MARK}${key}` } };
        return undefined;
      },
    }),
  );
}

/** Puts `__schema`'s marked `__typename` keys back, in place and in order. */
function restoreSchemaTypename(v: unknown): unknown {
  if (Array.isArray(v)) v.forEach(restoreSchemaTypename);
  else if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.some((k) => k.startsWith(SCHEMA_MARK))) {
      const entries = keys.map((k): [string, unknown] =>
        k.startsWith(SCHEMA_MARK) ? [k.slice(SCHEMA_MARK.length), '__schema'] : [k, o[k]],
      );
      for (const k of keys) delete o[k];
      for (const [k, x] of entries) o[k] = x;
    }
    for (const x of Object.values(o)) restoreSchemaTypename(x);
  }
  return v;
}

/**
 * pg_graphql's own rendering of the introspection meta-types, applied to graphql-js introspection
 * output: meta-type fields sorted by name, no fields pg_graphql lacks (`isOneOf`, directive
 * deprecation), no DIRECTIVE_DEFINITION location, undescribed __TypeKind values, and its texts.
 */
const META_DESCRIPTIONS: Record<string, string> = {
  __Type:
    'The fundamental unit of any GraphQL Schema is the type. There are many kinds of types in GraphQL as represented by the `__TypeKind` enum.\\n\\n' +
    'Depending on the kind of a type, certain fields describe information about that type. Scalar types provide no information beyond a name, description and optional `specifiedByURL`, while Enum types provide their values. ' +
    'Object and Interface types provide the fields they describe. Abstract types, Union and Interface, provide the Object types possible at runtime. List and NonNull types compose other types ',
  __Directive:
    'A Directive provides a way to describe alternate runtime execution and type validation behavior in a GraphQL document.\\n\\n' +
    'In some cases, you need to provide options to alter GraphQL execution behavior in ways field arguments will not suffice, such as conditionally including or skipping a field. Directives provide this by describing additional information to the executor.',
};

const ABSENT_FIELDS: Record<string, string[]> = {
  __Type: ['isOneOf'],
  __Directive: ['isDeprecated', 'deprecationReason'],
};

type Obj = Record<string, unknown>;

const byName = (a: unknown, b: unknown) => {
  const x = String((a as Obj).name);
  const y = String((b as Obj).name);
  return x < y ? -1 : x > y ? 1 : 0;
};

function unwrapNonNull(t: unknown): unknown {
  const o = t as Obj | null;
  return o && o.kind === 'NON_NULL' && o.ofType ? o.ofType : t;
}

function metaType(o: Obj, name: string): void {
  if ('description' in o && META_DESCRIPTIONS[name]) o.description = META_DESCRIPTIONS[name];
  if (Array.isArray(o.fields) && o.fields.every((f) => typeof (f as Obj).name === 'string')) {
    const absent = ABSENT_FIELDS[name] ?? [];
    o.fields = (o.fields as Obj[]).filter((f) => !absent.includes(f.name as string)).sort(byName);
    if (name === '__Schema') {
      for (const f of o.fields as Obj[]) {
        if (f.name !== 'directives' || !Array.isArray(f.args)) continue;
        for (const a of f.args as Obj[]) if ('type' in a) a.type = unwrapNonNull(a.type);
      }
    }
  }
  if (name === '__DirectiveLocation' && Array.isArray(o.enumValues)) {
    o.enumValues = (o.enumValues as Obj[]).filter((v) => v.name !== 'DIRECTIVE_DEFINITION');
  }
  if (name === '__TypeKind' && Array.isArray(o.enumValues)) {
    for (const v of o.enumValues as Obj[]) if ('description' in v) v.description = null;
  }
}

/** Rewrites introspection output in place (and returns it). */
function toPgGraphqlDialect(v: unknown): unknown {
  if (Array.isArray(v)) v.forEach(toPgGraphqlDialect);
  else if (v && typeof v === 'object') {
    const o = v as Obj;
    if (typeof o.kind === 'string' && typeof o.name === 'string') {
      if (o.kind === 'SCALAR' && 'description' in o && BUILTIN_SCALAR_DESCRIPTIONS[o.name])
        o.description = BUILTIN_SCALAR_DESCRIPTIONS[o.name];
      if (o.name.startsWith('__')) metaType(o, o.name);
    }
    // pg_graphql lists "no enum values" / "no interfaces" as empty lists rather than null.
    if (typeof o.kind === 'string' && o.enumValues === null) o.enumValues = [];
    if (typeof o.kind === 'string' && o.interfaces === null) o.interfaces = [];
    for (const x of Object.values(o)) toPgGraphqlDialect(x);
  }
  return v;
}
