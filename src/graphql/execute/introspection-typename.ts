/**
 * pg_graphql's `__typename` inside introspection: on a `__Type`, `__Field`, `__InputValue` or
 * `__EnumValue` it answers the described thing's own name (null for a LIST/NON_NULL wrapper), on
 * `__Schema` the root field's name (`__schema`), on `__Directive` "__Directive" (as graphql-js).
 * graphql-js answers the meta-type's name, so the document is rewritten before it runs: those
 * `__typename`s become `name` under the same response key, and `__Schema`'s gets a marked key
 * that `restoreSchemaTypename` turns back into `__typename: "__schema"`.
 */
import {
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type FieldNode,
  type GraphQLSchema,
} from 'graphql';

const NAMED_BY_OWN_NAME = new Set(['__Type', '__Field', '__InputValue', '__EnumValue']);
const SCHEMA_MARK = '__strata_schema_typename__';

export function rewriteIntrospectionTypename(schema: GraphQLSchema, document: DocumentNode): DocumentNode {
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
export function restoreSchemaTypename(v: unknown): unknown {
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
