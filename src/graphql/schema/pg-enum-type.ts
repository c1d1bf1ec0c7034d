/**
 * A GraphQL enum for a SQL enum, showing every label (or its `mappings` name) as pg_graphql does,
 * even one that is not a GraphQL name (`PG-13`).
 *
 * graphql-js refuses such a name in an enum's config, and has no public way to rename a value
 * afterwards. The gap is bridged here, with public API only: the type is built under stand-in
 * names, each value object (a public, plain data object) is given its real name, and `getValue`
 * (a public method) is overridden to look names up in those values, so nothing depends on how
 * graphql-js caches its own lookup. Schemas showing such a value are built `assumeValid`.
 */
import { GraphQLEnumType, GraphQLScalarType, type GraphQLEnumValue } from 'graphql';
import type { EnumType } from '../introspect/model.js';
import { isValidGraphQLName } from '../introspect/naming.js';

class RenamedEnumType extends GraphQLEnumType {
  private byName: Map<string, GraphQLEnumValue> | undefined;

  override getValue(name: string): GraphQLEnumValue | undefined {
    this.byName ??= new Map(this.getValues().map((v) => [v.name, v]));
    return this.byName.get(name);
  }
}

/**
 * The enum type of `e`; with `omitInvalid` (printed SDL), values whose names are not GraphQL
 * names are left out, and an enum none of whose values has one (`channels.delete`,
 * `messages.delete`) is printed as a scalar of the same name: an enum without values is invalid
 * SDL, and the scalar takes the labels (as strings, through variables) that the server takes.
 */
export function enumTypeOf(e: EnumType, omitInvalid: boolean): GraphQLEnumType | GraphQLScalarType {
  if (omitInvalid && e.values.length && !e.values.some((v) => isValidGraphQLName(v.name)))
    return new GraphQLScalarType({
      name: e.name,
      description:
        `${e.description ? `${e.description}\n\n` : ''}The enum ${e.schema}.${e.sqlName}, whose values are not GraphQL names ` +
        `(${e.values.map((v) => JSON.stringify(v.name)).join(', ')}): they are sent as strings in variables`,
    });
  const values: Record<string, { value: string }> = {};
  const renames = new Map<string, string>();
  e.values.forEach((v, i) => {
    if (isValidGraphQLName(v.name)) values[v.name] = { value: v.label };
    else if (!omitInvalid) {
      const standIn = `__strata_invalid_enum_value_${i}`;
      renames.set(standIn, v.name);
      values[standIn] = { value: v.label };
    }
  });
  const config = { name: e.name, description: e.description ?? undefined, values };
  if (!renames.size) return new GraphQLEnumType(config);
  const type = new RenamedEnumType(config);
  for (const value of type.getValues()) {
    const real = renames.get(value.name);
    if (real !== undefined) (value as { name: string }).name = real;
  }
  return type;
}

/** True when the enum shows a value whose name graphql-js would refuse (the schema must skip validation). */
export function hasInvalidEnumValueNames(e: EnumType): boolean {
  return e.values.some((v) => !isValidGraphQLName(v.name));
}
