/** The types every reflected schema has: scalars, scalar filters, PageInfo, Node, OrderByDirection, FilterIs. */
import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLFloat,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLString,
  type GraphQLInputFieldConfigMap,
  type GraphQLInputType,
  type GraphQLNamedType,
} from 'graphql';
import { filterType, listFilterType } from '../introspect/naming.js';
import type { ScalarName } from '../introspect/model.js';
import { FILTER_SCALARS, LIST_FILTER_OPS, LIST_FILTER_SCALARS, filterOps } from '../introspect/rules.js';

/** Descriptions pg_graphql gives the built-in scalars (applied to introspection output). */
export const BUILTIN_SCALAR_DESCRIPTIONS: Record<string, string> = {
  Int: 'A scalar integer up to 32 bits',
  Float: 'A scalar floating point value up to 32 bits',
  String: 'A string',
  Boolean: 'A value that is true or false',
  ID: 'A globally unique identifier for a given record',
};

const custom = (name: string, description: string) => new GraphQLScalarType({ name, description });

export interface SharedTypes {
  scalars: Record<ScalarName, GraphQLScalarType>;
  filters: Map<string, GraphQLInputObjectType>;
  listFilters: Map<string, GraphQLInputObjectType>;
  pageInfo: GraphQLObjectType;
  node: GraphQLInterfaceType;
  orderByDirection: GraphQLEnumType;
  filterIs: GraphQLEnumType;
  all: GraphQLNamedType[];
}

export function buildSharedTypes(): SharedTypes {
  const scalars: Record<ScalarName, GraphQLScalarType> = {
    Int: GraphQLInt,
    Float: GraphQLFloat,
    String: GraphQLString,
    Boolean: GraphQLBoolean,
    ID: GraphQLID,
    BigInt: custom('BigInt', 'An arbitrary size integer represented as a string'),
    BigFloat: custom('BigFloat', 'A high precision floating point value represented as a string'),
    UUID: custom('UUID', 'A universally unique identifier'),
    Date: custom('Date', 'A date without time information'),
    Time: custom('Time', 'A time without date information'),
    Datetime: custom('Datetime', 'A date and time'),
    JSON: custom('JSON', 'A Javascript Object Notation value serialized as a string'),
    Opaque: custom('Opaque', 'Any type not handled by the type system'),
    Cursor: custom('Cursor', 'An opaque string using for tracking a position in results during pagination'),
  };
  const filterIs = new GraphQLEnumType({
    name: 'FilterIs',
    values: { NULL: { value: 'NULL' }, NOT_NULL: { value: 'NOT_NULL' } },
  });
  const orderByDirection = new GraphQLEnumType({
    name: 'OrderByDirection',
    description: 'Defines a per-field sorting order',
    values: {
      AscNullsFirst: { value: 'AscNullsFirst', description: 'Ascending order, nulls first' },
      AscNullsLast: { value: 'AscNullsLast', description: 'Ascending order, nulls last' },
      DescNullsFirst: { value: 'DescNullsFirst', description: 'Descending order, nulls first' },
      DescNullsLast: { value: 'DescNullsLast', description: 'Descending order, nulls last' },
    },
  });
  const filters = new Map<string, GraphQLInputObjectType>();
  for (const s of FILTER_SCALARS) {
    filters.set(s, scalarFilter(s, scalars[s], filterOps(s), filterIs));
  }
  const listFilters = new Map<string, GraphQLInputObjectType>();
  for (const s of LIST_FILTER_SCALARS) {
    const item = new GraphQLList(new GraphQLNonNull(scalars[s]));
    const fields: GraphQLInputFieldConfigMap = {};
    for (const op of LIST_FILTER_OPS) fields[op] = { type: op === 'is' ? filterIs : item };
    listFilters.set(
      s,
      new GraphQLInputObjectType({
        name: listFilterType(s),
        description: `Boolean expression comparing fields on type "${s}List"`,
        fields,
      }),
    );
  }
  const pageInfo = new GraphQLObjectType({
    name: 'PageInfo',
    fields: {
      endCursor: { type: GraphQLString },
      hasNextPage: { type: new GraphQLNonNull(GraphQLBoolean) },
      hasPreviousPage: { type: new GraphQLNonNull(GraphQLBoolean) },
      startCursor: { type: GraphQLString },
    },
  });
  const node = new GraphQLInterfaceType({
    name: 'Node',
    fields: { nodeId: { type: new GraphQLNonNull(GraphQLID), description: 'Retrieves a record by `ID`' } },
  });
  const all: GraphQLNamedType[] = [
    ...Object.values(scalars),
    filterIs,
    orderByDirection,
    ...filters.values(),
    ...listFilters.values(),
    pageInfo,
    node,
  ];
  return { scalars, filters, listFilters, pageInfo, node, orderByDirection, filterIs, all };
}

export function scalarFilter(
  name: string,
  type: GraphQLInputType,
  ops: string[],
  filterIs: GraphQLEnumType,
): GraphQLInputObjectType {
  const fields: GraphQLInputFieldConfigMap = {};
  for (const op of ops) {
    if (op === 'is') fields.is = { type: filterIs };
    else if (op === 'in') fields.in = { type: new GraphQLList(new GraphQLNonNull(type)) };
    else fields[op] = { type };
  }
  return new GraphQLInputObjectType({
    name: filterType(name),
    description: `Boolean expression comparing fields on type "${name}"`,
    fields,
  });
}
