/** Per-table GraphQL types: the node type, connection, edge, filter, orderBy, inputs, responses, aggregates. */
import {
  aggregateResultType,
  aggregateType,
  connectionType,
  edgeType,
  filterType,
  insertInputType,
  mutationResponseType,
  constraintType,
  onConflictType,
  orderByType,
  toManyFilterType,
  updateColumnType,
  updateInputType,
  type AggregateKind,
  type MutationKind,
} from '../introspect/naming.js';
import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  GraphQLID,
  type GraphQLScalarType,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLInputType,
} from 'graphql';
import type { Catalog, EnumType, Func, SqlType, Table } from '../introspect/model.js';
import {
  filterTypeOf,
  hasInsertMutation,
  hasUpdateMutation,
  insertableColumns,
  orderableColumns,
  minMaxColumns,
  nestedInsertFields,
  nodeFields,
  relatedInputFields,
  TO_MANY_QUANTIFIERS,
  selectableColumns,
  sumAvgColumns,
  updatableColumns,
  upsertOptions,
} from '../introspect/rules.js';
import { enumTypeOf } from './pg-enum-type.js';
import { enumFilterOps } from '../introspect/rules.js';
import { scalarFilter, type SharedTypes } from './shared-types.js';

export interface TableTypes {
  node: GraphQLObjectType;
  connection: GraphQLObjectType;
  filter: GraphQLInputObjectType;
  orderBy: GraphQLInputObjectType;
  insertInput?: GraphQLInputObjectType;
  /** Strata `upsert`: the `onConflict` argument's type. */
  onConflict?: GraphQLInputObjectType;
  updateInput?: GraphQLInputObjectType;
  insertResponse?: GraphQLObjectType;
  updateResponse?: GraphQLObjectType;
  deleteResponse?: GraphQLObjectType;
  all: GraphQLNamedType[];
}

export class TypeRegistry {
  readonly tables = new Map<Table, TableTypes>();
  readonly enums = new Map<
    EnumType,
    { type: GraphQLEnumType | GraphQLScalarType; filter: GraphQLInputObjectType }
  >();
  private readonly toManyFilters = new Map<Table, GraphQLInputObjectType>();
  constructor(
    readonly shared: SharedTypes,
    readonly catalog: Catalog,
    readonly visible: (t: Table) => boolean,
    /** Leave out enum values whose names are not GraphQL names (printed SDL) instead of showing them as pg_graphql does. */
    readonly omitInvalidEnumValues = false,
  ) {}

  enumOf(e: EnumType) {
    let hit = this.enums.get(e);
    if (!hit) {
      const type = enumTypeOf(e, this.omitInvalidEnumValues);
      hit = { type, filter: scalarFilter(e.name, type, enumFilterOps(), this.shared.filterIs) };
      this.enums.set(e, hit);
    }
    return hit;
  }

  /** Output type of a SQL type (without non-null). */
  outputOf(t: SqlType): GraphQLOutputType {
    const base = t.enumRef ? this.enumOf(t.enumRef).type : this.shared.scalars[t.scalar];
    return t.isArray ? new GraphQLList(base) : base;
  }

  inputOf(t: SqlType): GraphQLInputType {
    const base = t.enumRef ? this.enumOf(t.enumRef).type : this.shared.scalars[t.scalar];
    return t.isArray ? new GraphQLList(base) : base;
  }

  filterOf(t: SqlType): GraphQLInputObjectType | undefined {
    const name = filterTypeOf(t);
    if (!name) return undefined;
    if (t.isArray) return this.shared.listFilters.get(t.scalar);
    if (t.enumRef) return this.enumOf(t.enumRef).filter;
    return this.shared.filters.get(t.scalar);
  }

  connectionArgs(table: Table): GraphQLFieldConfigArgumentMap {
    const tt = this.of(table);
    return {
      first: { type: GraphQLInt, description: 'Query the first `n` records in the collection' },
      last: { type: GraphQLInt, description: 'Query the last `n` records in the collection' },
      before: {
        type: this.shared.scalars.Cursor,
        description: 'Query values in the collection before the provided cursor',
      },
      after: {
        type: this.shared.scalars.Cursor,
        description: 'Query values in the collection after the provided cursor',
      },
      offset: {
        type: GraphQLInt,
        description:
          'Skip n values from the after cursor. Alternative to cursor pagination. Backward pagination not supported.',
      },
      filter: {
        type: tt.filter,
        description: 'Filters to apply to the results set when querying from the collection',
      },
      orderBy: {
        type: new GraphQLList(new GraphQLNonNull(tt.orderBy)),
        description: 'Sort order to apply to the collection',
      },
    };
  }

  /** Field config for a function used as a field (root or computed). */
  functionOutput(f: Func): { type: GraphQLOutputType; args: GraphQLFieldConfigArgumentMap } {
    if (f.returnTable) {
      const tt = this.of(f.returnTable);
      if (f.setof && !f.rowsOne) return { type: tt.connection, args: this.connectionArgs(f.returnTable) };
      return { type: tt.node, args: {} };
    }
    if (!f.setof) return { type: this.outputOf(f.returns), args: {} };
    // Strata `setof_scalars`: a set of scalars is a list, paged as a connection is (LIST_PAGE_ARGS).
    return {
      type: new GraphQLList(this.outputOf(f.returns)),
      args: {
        first: { type: GraphQLInt, description: 'Query the first `n` values of the list' },
        offset: { type: GraphQLInt, description: 'Skip n values from the start of the list' },
      },
    };
  }

  of(table: Table): TableTypes {
    const hit = this.tables.get(table);
    if (hit) return hit;
    const n = table.typeName;
    const s = this.shared;
    const cols = selectableColumns(table);
    const node: GraphQLObjectType = new GraphQLObjectType({
      name: n,
      description: table.description ?? undefined,
      interfaces: table.primaryKey.length ? [s.node] : [],
      fields: () => {
        const f: GraphQLFieldConfigMap<unknown, unknown> = {};
        for (const [name, o] of nodeFields(table)) {
          if (o.kind === 'nodeId')
            f[name] = {
              type: new GraphQLNonNull(GraphQLID),
              description: 'Globally Unique Record Identifier',
            };
          else if (o.kind === 'column') {
            const t = this.outputOf(o.column.type);
            f[name] = {
              type: o.column.notNull ? new GraphQLNonNull(t) : t,
              description: o.column.description ?? undefined,
            };
          } else if (o.kind === 'function') {
            if (o.fn.returnTable && !this.visible(o.fn.returnTable)) continue;
            const out = this.functionOutput(o.fn);
            f[name] = { type: out.type, args: out.args, description: o.fn.description ?? undefined };
          } else {
            const r = o.relationship;
            if (!this.visible(r.target)) continue;
            const tt = this.of(r.target);
            if (r.kind === 'toMany') f[name] = { type: tt.connection, args: this.connectionArgs(r.target) };
            else f[name] = { type: r.nonNull ? new GraphQLNonNull(tt.node) : tt.node };
          }
        }
        return f;
      },
    });
    const edge = new GraphQLObjectType({
      name: edgeType(n),
      fields: {
        cursor: { type: new GraphQLNonNull(GraphQLString) },
        node: { type: new GraphQLNonNull(node) },
      },
    });
    const all: GraphQLNamedType[] = [node, edge];
    const connFields: GraphQLFieldConfigMap<unknown, unknown> = {
      edges: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(edge))) },
      pageInfo: { type: new GraphQLNonNull(s.pageInfo) },
    };
    if (table.totalCount)
      connFields.totalCount = {
        type: new GraphQLNonNull(GraphQLInt),
        description: 'The total number of records matching the `filter` criteria',
      };
    if (table.aggregate) {
      const agg = this.aggregateType(table, all);
      connFields.aggregate = {
        type: agg,
        description: 'Aggregate functions calculated on the collection of `' + n + '`',
      };
    }
    const connection = new GraphQLObjectType({ name: connectionType(n), fields: connFields });
    const filter: GraphQLInputObjectType = new GraphQLInputObjectType({
      name: filterType(n),
      description: `Boolean expression comparing fields on type "${n}"`,
      fields: () => {
        const f: GraphQLInputFieldConfigMap = {};
        for (const c of cols) {
          const ft = this.filterOf(c.type);
          if (ft) f[c.fieldName] = { type: ft };
        }
        const idFilter = s.filters.get('ID');
        if (!idFilter) throw new Error('internal error: the shared types have no IDFilter');
        f.nodeId ??= { type: idFilter };
        f.and ??= {
          type: new GraphQLList(new GraphQLNonNull(filter)),
          description: 'Returns true only if all its inner filters are true, otherwise returns false',
        };
        f.or ??= {
          type: new GraphQLList(new GraphQLNonNull(filter)),
          description: 'Returns true if at least one of its inner filters is true, otherwise returns false',
        };
        f.not ??= { type: filter, description: 'Negates a filter' };
        for (const [name, r] of relatedInputFields(table, 'filter')) {
          if (!this.visible(r.target)) continue;
          f[name] = { type: r.kind === 'toOne' ? this.of(r.target).filter : this.toManyFilterOf(r.target) };
        }
        return f;
      },
    });
    const orderFields = (): GraphQLInputFieldConfigMap => {
      const f: GraphQLInputFieldConfigMap = {};
      for (const c of orderableColumns(table)) f[c.fieldName] = { type: s.orderByDirection };
      for (const [name, r] of relatedInputFields(table, 'orderBy'))
        if (this.visible(r.target)) f[name] = { type: this.of(r.target).orderBy };
      return f;
    };
    const orderBy = new GraphQLInputObjectType({ name: orderByType(n), fields: orderFields });
    all.push(connection, filter, orderBy);
    const out: TableTypes = { node, connection, filter, orderBy, all };
    this.tables.set(table, out);

    const response = (kind: MutationKind) =>
      new GraphQLObjectType({
        name: mutationResponseType(n, kind),
        fields: {
          affectedCount: {
            type: new GraphQLNonNull(GraphQLInt),
            description: 'Count of the records impacted by the mutation',
          },
          records: {
            type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(node))),
            description: 'Array of records impacted by the mutation',
          },
        },
      });
    if (!table.primaryKey.length) return out;
    const ins = insertableColumns(table);
    if (hasInsertMutation(table)) {
      const insertFields = (): GraphQLInputFieldConfigMap => {
        const f: GraphQLInputFieldConfigMap = {};
        for (const c of ins) f[c.fieldName] = { type: this.inputOf(c.type) };
        // Strata `nested_mutations`: a related record (to-one) or records (to-many) created with it.
        for (const [name, r] of nestedInsertFields(table)) {
          const input = this.visible(r.target) ? this.of(r.target).insertInput : undefined;
          if (!input) continue;
          f[name] = { type: r.kind === 'toOne' ? input : new GraphQLList(new GraphQLNonNull(input)) };
        }
        return f;
      };
      out.insertInput = new GraphQLInputObjectType({ name: insertInputType(n), fields: insertFields });
      out.insertResponse = response('Insert');
      all.push(out.insertInput, out.insertResponse);
      const upsert = upsertOptions(table);
      if (upsert) {
        const enumOf = (name: string, values: string[], description: string) =>
          new GraphQLEnumType({
            name,
            description,
            values: Object.fromEntries(values.map((v) => [v, { value: v }])),
          });
        const constraint = enumOf(
          constraintType(n),
          upsert.targets.map((x) => x.name),
          `Unique constraints and indexes of \`${n}\` usable as conflict targets`,
        );
        const updateColumn = enumOf(
          updateColumnType(n),
          upsert.updatable.map((c) => c.fieldName),
          `Columns of \`${n}\` an upsert may update`,
        );
        out.onConflict = new GraphQLInputObjectType({
          name: onConflictType(n),
          description: 'What to do with a record that conflicts with an existing one',
          fields: {
            constraint: { type: new GraphQLNonNull(constraint) },
            updateColumns: {
              type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(updateColumn))),
              description: 'Columns set from the conflicting record; empty: do nothing',
            },
            filter: { type: filter, description: 'Only conflicting records matching it are updated' },
          },
        });
        all.push(constraint, updateColumn, out.onConflict);
      }
    }
    const upd = updatableColumns(table);
    if (hasUpdateMutation(table)) {
      const f: GraphQLInputFieldConfigMap = {};
      for (const c of upd) f[c.fieldName] = { type: this.inputOf(c.type) };
      out.updateInput = new GraphQLInputObjectType({ name: updateInputType(n), fields: f });
      out.updateResponse = response('Update');
      all.push(out.updateInput, out.updateResponse);
    }
    if (table.canDelete) {
      out.deleteResponse = response('Delete');
      all.push(out.deleteResponse);
    }
    return out;
  }

  /** Strata `related_filters`: `some` / `every` / `none` of a to-many relationship's rows. */
  private toManyFilterOf(table: Table): GraphQLInputObjectType {
    let hit = this.toManyFilters.get(table);
    if (!hit) {
      const filter = this.of(table).filter;
      const desc = {
        every: 'True when every related record the role can see matches the filter',
        none: 'True when no related record the role can see matches the filter',
        some: 'True when at least one related record the role can see matches the filter',
      };
      hit = new GraphQLInputObjectType({
        name: toManyFilterType(table.typeName),
        description: `Filter on the related \`${table.typeName}\` records`,
        fields: Object.fromEntries(
          TO_MANY_QUANTIFIERS.map((q) => [q, { type: filter, description: desc[q] }]),
        ),
      });
      this.toManyFilters.set(table, hit);
    }
    return hit;
  }

  private aggregateType(table: Table, all: GraphQLNamedType[]): GraphQLObjectType {
    const n = table.typeName;
    const s = this.shared;
    const fields: GraphQLFieldConfigMap<unknown, unknown> = {
      count: {
        type: new GraphQLNonNull(GraphQLInt),
        description: 'The number of records matching the query',
      },
    };
    const sa = sumAvgColumns(table);
    const mm = minMaxColumns(table);
    const make = (
      kind: AggregateKind,
      cols: typeof sa,
      typeFor: (c: (typeof sa)[number]) => GraphQLOutputType,
      desc: string,
    ) => {
      const f: GraphQLFieldConfigMap<unknown, unknown> = {};
      for (const c of cols) f[c.fieldName] = { type: typeFor(c) };
      const t = new GraphQLObjectType({ name: aggregateResultType(n, kind), fields: f });
      all.push(t);
      fields[kind.toLowerCase()] = { type: t, description: desc };
    };
    if (sa.length) {
      make(
        'Sum',
        sa,
        (c) => (['int2', 'int4', 'int8'].includes(c.type.baseName) ? s.scalars.BigInt : s.scalars.BigFloat),
        'Summation aggregates for `' + n + '`',
      );
      make('Avg', sa, () => s.scalars.BigFloat, 'Average aggregates for `' + n + '`');
    }
    if (mm.length) {
      const t = (c: (typeof mm)[number]) =>
        ['float4', 'float8'].includes(c.type.baseName) ? s.scalars.BigFloat : this.outputOf(c.type);
      make('Min', mm, t, 'Minimum aggregates for comparable fields');
      make('Max', mm, t, 'Maximum aggregates for comparable fields');
    }
    const agg = new GraphQLObjectType({ name: aggregateType(n), fields });
    all.push(agg);
    return agg;
  }
}
