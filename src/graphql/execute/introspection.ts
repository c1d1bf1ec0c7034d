/** `__schema` / `__type` root fields, executed by graphql-js against the reflected schema. */
import { execute, Kind, type DocumentNode, type FieldNode, type GraphQLSchema } from 'graphql';
import { BUILTIN_SCALAR_DESCRIPTIONS } from '../schema/shared-types.js';
import type { Operation } from './document.js';

export async function runIntrospectionField(schema: GraphQLSchema, operation: Operation, node: FieldNode, variables: Record<string, unknown>): Promise<unknown> {
  const document: DocumentNode = {
    kind: Kind.DOCUMENT,
    definitions: [
      { ...operation.op, operation: 'query' as never, selectionSet: { kind: Kind.SELECTION_SET, selections: [node] } },
      ...operation.fragments.values(),
    ],
  };
  const result = await execute({ schema, document, variableValues: variables });
  if (result.errors?.length) throw new Error(result.errors[0]!.message);
  const alias = node.alias?.value ?? node.name.value;
  return fixDescriptions(result.data?.[alias] ?? null);
}

/** pg_graphql describes the built-in scalars in its own words. */
function fixDescriptions(v: unknown): unknown {
  if (Array.isArray(v)) v.forEach(fixDescriptions);
  else if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (o.kind === 'SCALAR' && typeof o.name === 'string' && 'description' in o && BUILTIN_SCALAR_DESCRIPTIONS[o.name]) {
      o.description = BUILTIN_SCALAR_DESCRIPTIONS[o.name];
    }
    // pg_graphql lists "no enum values" / "no interfaces" as empty lists rather than null.
    if (typeof o.kind === 'string' && o.enumValues === null) o.enumValues = [];
    if (typeof o.kind === 'string' && o.interfaces === null) o.interfaces = [];
    for (const x of Object.values(o)) fixDescriptions(x);
  }
  return v;
}
