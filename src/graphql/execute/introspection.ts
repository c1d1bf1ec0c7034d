/** `__schema` / `__type` root fields, executed by graphql-js against the reflected schema. */
import {
  execute,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
} from 'graphql';
import { toPgGraphqlDialect } from './introspection-dialect.js';
import { restoreSchemaTypename, rewriteIntrospectionTypename } from './introspection-typename.js';
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
