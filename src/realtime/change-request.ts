/**
 * A change-stream subscription (`<type>Changes(filter, after) { op record { … } nodeId cursor }`)
 * → the collection query that fetches, as the subscriber, the records of the rows a batch of
 * commits changed: the subscription's `<type>Changes` field rewritten at the AST level into
 * `<type>Collection(first: maxRows, filter: {and: [<their filter>, {or: $keys}]}) { edges { node {
 * nodeId <their record selection> } } }`, where `$keys` lists `{nodeId: {eq: …}}` of the changed
 * rows (one such field per `maxRows` keys, in one request). The engine plans and runs it as any
 * query: grants and RLS decide what comes back.
 */
import {
  Kind,
  OperationTypeNode,
  print,
  visit,
  type ASTNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionNode,
  type ValueNode,
  type VariableDefinitionNode,
} from 'graphql';
import type { ChangeTable } from '../graphql/engine.js';
import type { GraphQLRequest } from '../graphql/engine.js';
import type { LiveRequest } from './live-request.js';

/** The field of each fetched node that carries its node id (a name no client selects: checked). */
export const NODE_ID_ALIAS = '_strataNodeId';
const KEYS_VARIABLE = '_strataKeys';

/** The parts of an event the subscriber selected, in their order: [response key, what]. */
type EventField = [string, 'op' | 'record' | 'nodeId' | 'cursor' | '__typename'];

export type ChangeOp = 'INSERT' | 'UPDATE' | 'DELETE';

export interface ChangeRequest {
  table: ChangeTable;
  /** The cursor the subscriber resumes after (`after`), if any. */
  after: string | undefined;
  /** The fetch of `keys` (node ids) as an engine request; `first` overrides the page size. */
  fetch(keys: readonly string[], first?: number): GraphQLRequest;
  /** What the subscriber receives for one change. */
  event(
    op: ChangeOp,
    record: Record<string, unknown> | null,
    nodeId: string,
    cursor: string,
  ): Record<string, unknown>;
  /** Equal for two subscriptions that fetch the same way (document and the variables it uses). */
  fetchKey: string;
  /** Equal for two subscriptions whose events read the same (field alias, selected parts). */
  eventKey: string;
}

class Refusal extends Error {}

const refuse = (message: string): never => {
  throw new Refusal(message);
};

/** The subscription's change request, or the message that refuses it. */
export function changeRequestOf(
  request: LiveRequest,
  table: ChangeTable,
): ChangeRequest | { refused: string } {
  try {
    return build(request, table);
  } catch (e) {
    if (e instanceof Refusal) return { refused: e.message };
    throw e;
  }
}

function build(request: LiveRequest, table: ChangeTable): ChangeRequest {
  const doc = request.document;
  const ops = doc.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const op =
    request.operationName === null ? ops[0] : ops.find((o) => o.name?.value === request.operationName);
  const top = op?.selectionSet.selections[0];
  if (!op || top?.kind !== Kind.FIELD) return refuse('Operation not found');
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const variables = request.variables ?? {};
  const typeName = `${table.typeName}Change`;

  let filter: ValueNode | undefined;
  let after: string | undefined;
  for (const arg of top.arguments ?? []) {
    if (arg.name.value === 'filter') filter = arg.value.kind === Kind.NULL ? undefined : arg.value;
    else if (arg.name.value === 'after') after = cursorArgument(arg.value, variables);
    else refuse(`Unknown argument "${arg.name.value}" on field "${table.field}"`);
  }
  if (!top.selectionSet)
    refuse(`Field "${table.field}" of type "${typeName}!" must have a selection of subfields`);

  const shape: EventField[] = [];
  const record: SelectionNode[] = [];
  const walk = (selections: readonly SelectionNode[], seen: Set<string>) => {
    for (const s of selections) {
      if (s.kind === Kind.FIELD) {
        const name = s.name.value;
        if (
          name !== 'op' &&
          name !== 'record' &&
          name !== 'nodeId' &&
          name !== 'cursor' &&
          name !== '__typename'
        )
          refuse(`Unknown field "${name}" on type ${typeName}`);
        if (s.arguments?.length) refuse(`Field "${name}" on type ${typeName} takes no arguments`);
        if (name === 'record') {
          if (!s.selectionSet)
            refuse(`Field "record" of type "${table.typeName}" must have a selection of subfields`);
          record.push(...(s.selectionSet?.selections ?? []));
        } else if (s.selectionSet) refuse(`Field "${name}" on type ${typeName} has no subfields`);
        const key = s.alias?.value ?? name;
        if (!shape.some(([k]) => k === key)) shape.push([key, name as EventField[1]]);
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        const on = s.typeCondition?.name.value;
        if (on !== undefined && on !== typeName)
          refuse(`Fragment cannot be spread here: type ${on} is not ${typeName}`);
        walk(s.selectionSet.selections, seen);
      } else {
        const name = s.name.value;
        const f = fragments.get(name);
        if (!f) return refuse(`Unknown fragment "${name}"`);
        if (f.typeCondition.name.value !== typeName)
          refuse(
            `Fragment "${name}" cannot be spread here: type ${f.typeCondition.name.value} is not ${typeName}`,
          );
        if (seen.has(name)) refuse(`Cannot spread fragment "${name}" within itself`);
        walk(f.selectionSet.selections, new Set([...seen, name]));
      }
    }
  };
  walk(top.selectionSet?.selections ?? [], new Set());
  for (const s of record)
    if (s.kind === Kind.FIELD && (s.alias?.value ?? s.name.value) === NODE_ID_ALIAS)
      refuse(`The name ${NODE_ID_ALIAS} is reserved in a change stream's record`);

  // What the fetch uses of the subscription: the filter, the record's selections, the fragments
  // they spread and the variables all of these name (the `after` variable is not among them).
  const used = new Set<string>();
  const usedFragments = new Map<string, FragmentDefinitionNode>();
  const scan = (node: ASTNode) =>
    visit(node, {
      Variable: (v) => void used.add(v.name.value),
      FragmentSpread: (s) => {
        const f = fragments.get(s.name.value);
        if (f && !usedFragments.has(f.name.value)) {
          usedFragments.set(f.name.value, f);
          scan(f);
        }
      },
    });
  if (filter) scan(filter);
  for (const s of record) scan(s);
  for (const name of used)
    if (name.startsWith(KEYS_VARIABLE)) refuse(`The variable name $${name} is reserved in a change stream`);
  const defs = (op.variableDefinitions ?? []).filter((d) => used.has(d.variable.name.value));
  const usedValues: Record<string, unknown> = {};
  for (const d of defs) {
    const name = d.variable.name.value;
    if (Object.hasOwn(variables, name)) usedValues[name] = variables[name];
  }

  const named = (value: string) => ({ kind: Kind.NAME, value }) as const;
  const nodeSelections: SelectionNode[] = [
    { kind: Kind.FIELD, alias: named(NODE_ID_ALIAS), name: named('nodeId') },
    ...record,
  ];
  const texts = new Map<string, string>();
  /** The fetch document with `chunks` collection fields of `first` rows each. */
  const documentOf = (chunks: number, first: number): string => {
    const cacheKey = `${chunks}:${first}`;
    const hit = texts.get(cacheKey);
    if (hit) return hit;
    const varDefs: VariableDefinitionNode[] = [...defs];
    const fields: FieldNode[] = [];
    for (let i = 0; i < chunks; i++) {
      const keys: ValueNode = {
        kind: Kind.OBJECT,
        fields: [
          {
            kind: Kind.OBJECT_FIELD,
            name: named('or'),
            value: { kind: Kind.VARIABLE, name: named(`${KEYS_VARIABLE}${i}`) },
          },
        ],
      };
      varDefs.push({
        kind: Kind.VARIABLE_DEFINITION,
        variable: { kind: Kind.VARIABLE, name: named(`${KEYS_VARIABLE}${i}`) },
        type: {
          kind: Kind.NON_NULL_TYPE,
          type: {
            kind: Kind.LIST_TYPE,
            type: {
              kind: Kind.NON_NULL_TYPE,
              type: { kind: Kind.NAMED_TYPE, name: named(`${table.typeName}Filter`) },
            },
          },
        },
      });
      const where: ValueNode = filter
        ? {
            kind: Kind.OBJECT,
            fields: [
              {
                kind: Kind.OBJECT_FIELD,
                name: named('and'),
                value: { kind: Kind.LIST, values: [filter, keys] },
              },
            ],
          }
        : keys;
      fields.push({
        kind: Kind.FIELD,
        alias: named(`c${i}`),
        name: named(table.collectionField),
        arguments: [
          { kind: Kind.ARGUMENT, name: named('first'), value: { kind: Kind.INT, value: String(first) } },
          { kind: Kind.ARGUMENT, name: named('filter'), value: where },
        ],
        selectionSet: {
          kind: Kind.SELECTION_SET,
          selections: [
            {
              kind: Kind.FIELD,
              name: named('edges'),
              selectionSet: {
                kind: Kind.SELECTION_SET,
                selections: [
                  {
                    kind: Kind.FIELD,
                    name: named('node'),
                    selectionSet: { kind: Kind.SELECTION_SET, selections: nodeSelections },
                  },
                ],
              },
            },
          ],
        },
      });
    }
    const operation: OperationDefinitionNode = {
      kind: Kind.OPERATION_DEFINITION,
      operation: OperationTypeNode.QUERY,
      variableDefinitions: varDefs,
      selectionSet: { kind: Kind.SELECTION_SET, selections: fields },
    };
    const text = print({
      kind: Kind.DOCUMENT,
      definitions: [operation, ...usedFragments.values()],
    } as DocumentNode);
    texts.set(cacheKey, text);
    return text;
  };

  const pageSize = Math.max(1, table.maxRows);
  const alias = top.alias?.value ?? top.name.value;
  return {
    table,
    after,
    fetchKey: JSON.stringify([documentOf(1, pageSize), usedValues]),
    eventKey: JSON.stringify([alias, shape]),
    fetch(keys, first) {
      const size = first ?? pageSize;
      const chunks = Math.max(1, Math.ceil(keys.length / size));
      const vars: Record<string, unknown> = { ...usedValues };
      for (let i = 0; i < chunks; i++)
        vars[`${KEYS_VARIABLE}${i}`] = keys
          .slice(i * size, (i + 1) * size)
          .map((id) => ({ nodeId: { eq: id } }));
      return { query: documentOf(chunks, size), variables: vars, operationName: null };
    },
    event(op, rec, nodeId, cursor) {
      const out: Record<string, unknown> = {};
      for (const [key, what] of shape)
        out[key] =
          what === 'op'
            ? op
            : what === 'record'
              ? rec
              : what === 'nodeId'
                ? nodeId
                : what === 'cursor'
                  ? cursor
                  : typeName;
      return { data: { [alias]: out } };
    },
  };
}

function cursorArgument(v: ValueNode, variables: Record<string, unknown>): string | undefined {
  const value =
    v.kind === Kind.VARIABLE
      ? variables[v.name.value]
      : v.kind === Kind.STRING
        ? v.value
        : v.kind === Kind.NULL
          ? null
          : v;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') return refuse('Invalid input for String type: after takes a cursor');
  return value;
}
