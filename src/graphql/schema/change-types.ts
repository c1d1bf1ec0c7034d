/**
 * Strata `subscriptions`: the types of a change stream field (`Subscription.<type>Changes`):
 * `<Type>Change { op: ChangeOp!, record: <Type>, nodeId: ID!, cursor: String! }` and
 * `enum ChangeOp { INSERT UPDATE DELETE }`, made only for schemas that have such a field.
 */
import {
  GraphQLEnumType,
  GraphQLID,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  type GraphQLFieldConfig,
  type GraphQLNamedType,
} from 'graphql';
import type { Table } from '../introspect/model.js';
import { CHANGE_OP_TYPE, changeType } from '../introspect/naming.js';
import type { TypeRegistry } from './table-types.js';

export class ChangeTypes {
  private op: GraphQLEnumType | undefined;
  private readonly byTable = new Map<Table, GraphQLObjectType>();

  constructor(private readonly reg: TypeRegistry) {}

  /** The types made so far (for the schema's type list). */
  get all(): GraphQLNamedType[] {
    return this.op ? [this.op, ...this.byTable.values()] : [];
  }

  field(t: Table): GraphQLFieldConfig<unknown, unknown> {
    const tt = this.reg.of(t);
    return {
      type: new GraphQLNonNull(this.of(t)),
      description: `The changes of \`${t.typeName}\` records the subscriber may see, one event per row change in commit order; resumable with \`after\``,
      args: {
        filter: {
          type: tt.filter,
          description: 'Only changes of records matching it (as the record is now)',
        },
        after: {
          type: GraphQLString,
          description: "An event's `cursor`: replays the retained changes after it, then goes on live",
        },
      },
    };
  }

  private of(t: Table): GraphQLObjectType {
    let hit = this.byTable.get(t);
    if (hit) return hit;
    this.op ??= new GraphQLEnumType({
      name: CHANGE_OP_TYPE,
      description: 'What happened to a row',
      values: { INSERT: {}, UPDATE: {}, DELETE: {} },
    });
    const op = this.op;
    const node = this.reg.of(t).node;
    hit = new GraphQLObjectType({
      name: changeType(t.typeName),
      description: `A change of a \`${t.typeName}\` record`,
      fields: {
        op: { type: new GraphQLNonNull(op) },
        record: {
          type: node,
          description:
            "The record as it is when the event is sent; null for a DELETE and when the row left the subscriber's view",
        },
        nodeId: { type: new GraphQLNonNull(GraphQLID) },
        cursor: {
          type: new GraphQLNonNull(GraphQLString),
          description: 'Resume the stream after this event with `after`',
        },
      },
    });
    this.byTable.set(t, hit);
    return hit;
  }
}
