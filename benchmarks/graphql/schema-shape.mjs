// The shape of a built schema, for the graphql-js floor (schema-floor.mjs): every named type that
// graphql-js does not define itself, with its fields, arguments, interfaces and enum values, types
// written as SDL references (`[Foo!]!`). Descriptions and defaults are kept, so the floor builds
// the same objects.
import {
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
} from 'graphql';

/** @param {import('graphql').GraphQLSchema} schema */
export function schemaShape(schema) {
  const types = [];
  for (const t of Object.values(schema.getTypeMap())) {
    if (t.name.startsWith('__') || (isScalarType(t) && isSpecifiedScalarType(t))) continue;
    const d = t.description ?? undefined;
    if (isScalarType(t)) types.push({ kind: 'scalar', name: t.name, d });
    else if (isEnumType(t))
      types.push({ kind: 'enum', name: t.name, d, values: t.getValues().map((v) => v.name) });
    else if (isInputObjectType(t))
      types.push({
        kind: 'input',
        name: t.name,
        d,
        fields: Object.values(t.getFields()).map((f) => [f.name, String(f.type), f.description ?? undefined]),
      });
    else if (isObjectType(t) || isInterfaceType(t))
      types.push({
        kind: isObjectType(t) ? 'object' : 'interface',
        name: t.name,
        d,
        interfaces: t.getInterfaces().map((i) => i.name),
        fields: Object.values(t.getFields()).map((f) => [
          f.name,
          String(f.type),
          f.description ?? undefined,
          f.args.map((a) => [a.name, String(a.type), a.description ?? undefined, a.defaultValue]),
        ]),
      });
  }
  return {
    query: schema.getQueryType()?.name,
    mutation: schema.getMutationType()?.name,
    types,
  };
}
