/** Catalog model → graphql-js GraphQLSchema (used for SDL, introspection and GraphiQL). */
import {
  GraphQLBoolean,
  GraphQLDirective,
  GraphQLID,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  isInputObjectType,
  DirectiveLocation,
  introspectionTypes,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap,
  type GraphQLNamedType,
} from 'graphql';
import type { Catalog, Table } from '../introspect/model.js';
import { pkColumns } from '../introspect/rules.js';
import { rootFields, type RootField } from '../introspect/root-fields.js';
import { buildSharedTypes } from './shared-types.js';
import { hasInvalidEnumValueNames } from './pg-enum-type.js';
import { TypeRegistry } from './table-types.js';
import { ChangeTypes } from './change-types.js';

const directives = [
  new GraphQLDirective({
    name: 'include',
    description: 'This field or fragment will be included only when the `if` argument is true.',
    locations: [
      DirectiveLocation.FIELD,
      DirectiveLocation.FRAGMENT_SPREAD,
      DirectiveLocation.INLINE_FRAGMENT,
    ],
    args: { if: { type: new GraphQLNonNull(GraphQLBoolean), description: 'Included when true' } },
  }),
  new GraphQLDirective({
    name: 'skip',
    description: 'This field or fragment will be skipped when the `if` argument is true.',
    locations: [
      DirectiveLocation.FIELD,
      DirectiveLocation.FRAGMENT_SPREAD,
      DirectiveLocation.INLINE_FRAGMENT,
    ],
    args: { if: { type: new GraphQLNonNull(GraphQLBoolean), description: 'Skipped when true' } },
  }),
];

export interface BuildOptions {
  /** Hide tables, functions and enums of schemas that did not opt in to introspection. */
  introspectionView?: boolean;
  /**
   * For printed SDL: leave out enum values that are not GraphQL names (pg_graphql shows them as
   * they are, which no SDL parser accepts); the catalog's invalidEnumLabels names them.
   */
  omitInvalidEnumValues?: boolean;
  /**
   * For printed SDL: given, an insert or update mutation whose input type has no fields (a table
   * whose only insertable columns are serial: pg_graphql still has the mutation) is left out with
   * its input type, since SDL tools refuse an input type without fields; each is named here.
   */
  sdlOmissions?: string[];
}

export function buildSchemaFromCatalog(catalog: Catalog, opts: BuildOptions = {}): GraphQLSchema {
  const shown = (schema: string) =>
    !opts.introspectionView || catalog.schemas.find((s) => s.name === schema)?.introspection === true;
  const visible = (t: Table) => shown(t.schema);
  const shared = buildSharedTypes();
  const reg = new TypeRegistry(shared, catalog, visible, opts.omitInvalidEnumValues === true);
  const changeTypes = new ChangeTypes(reg);
  const tables = catalog.tables.filter(visible);
  for (const e of catalog.enums) if (shown(e.schema)) reg.enumOf(e);

  const roots = rootFields(catalog, {
    table: visible,
    func: (f) => shown(f.schema) && (!f.returnTable || visible(f.returnTable)),
  });
  /** Root fields in name order (pg_graphql lists them so). */
  const emptyInputs = new Set<string>();
  const fieldsOf = (map: Map<string, RootField>) => {
    const out: GraphQLFieldConfigMap<unknown, unknown> = {};
    for (const name of [...map.keys()].sort()) {
      const rf = map.get(name) as RootField;
      const input = opts.sdlOmissions && withoutFields(reg, rf);
      if (input) {
        emptyInputs.add(input);
        opts.sdlOmissions?.push(
          `${name} is left out of the printed schema: its input type ${input} has no fields (the table's only columns the role may set are serial or generated), which SDL tools refuse; the server still has it`,
        );
        continue;
      }
      out[name] = rf.kind === 'changes' ? changeTypes.field(rf.table) : rootFieldConfig(reg, rf);
    }
    return out;
  };
  const query = new GraphQLObjectType({
    name: 'Query',
    description: 'The root type for querying data',
    fields: fieldsOf(roots.query),
  });
  const mutation = roots.mutation.size
    ? new GraphQLObjectType({
        name: 'Mutation',
        description: 'The root type for creating and mutating data',
        fields: fieldsOf(roots.mutation),
      })
    : undefined;

  // Strata `subscriptions` (introspect/root-fields.ts): absent unless a schema turned it on.
  const subscription = roots.subscription.size
    ? new GraphQLObjectType({
        name: 'Subscription',
        description:
          'The root type for live queries (each field named as a Query field is that field, pushed again when its result changes) and change streams (`<type>Changes`)',
        fields: fieldsOf(roots.subscription),
      })
    : undefined;

  const types: GraphQLNamedType[] = [...shared.all, query];
  if (mutation) types.push(mutation);
  if (subscription) types.push(subscription, ...changeTypes.all);
  for (const t of tables)
    if (t.primaryKey.length) types.push(...reg.of(t).all.filter((x) => !emptyInputs.has(x.name)));
  for (const e of reg.enums.values()) types.push(e.type, e.filter);
  types.push(...introspectionTypes);
  const seen = new Set<string>();
  const unique = types
    .filter((t) => {
      if (seen.has(t.name)) return false;
      seen.add(t.name);
      return true;
    })
    .sort(byName);
  // pg_graphql gives a table whose only insertable (updatable) columns are serial an insert (update)
  // mutation whose input type has no fields, which graphql-js' schema validation refuses.
  const emptyInput = unique.some((t) => isInputObjectType(t) && Object.keys(t.getFields()).length === 0);
  const schema = new GraphQLSchema({
    query,
    mutation,
    subscription,
    types: unique,
    directives,
    description: 'Represents the GraphQL schema of the database',
    // An enum value named as pg_graphql names it (`PG-13`) is not a GraphQL name: graphql-js'
    // schema validation would refuse every request, so a schema showing one skips it.
    assumeValid:
      emptyInput ||
      (!opts.omitInvalidEnumValues && [...reg.enums.keys()].some((e) => hasInvalidEnumValueNames(e))),
  });
  return sortTypeMap(schema);
}

/**
 * The type map in name order (printed SDL and `__schema { types }` list types by name, as pg_graphql does).
 * graphql-js keeps the order in which its constructor meets the types: given every type already
 * sorted, it meets them in that order, so the schema above is sorted unless it reached a type
 * that `types` did not list; only then is it built again from its own (complete) type map.
 */
function sortTypeMap(schema: GraphQLSchema): GraphQLSchema {
  const names = Object.keys(schema.getTypeMap());
  let sorted = true;
  for (let i = 1; i < names.length && sorted; i++) sorted = (names[i - 1] as string) < (names[i] as string);
  if (sorted) return schema;
  const types = Object.values(schema.getTypeMap()).sort(byName);
  return new GraphQLSchema({ ...schema.toConfig(), types });
}

function byName(a: GraphQLNamedType, b: GraphQLNamedType): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The name of the input type of an insert or update root field when that type has no fields. */
function withoutFields(reg: TypeRegistry, rf: RootField): string | undefined {
  if (rf.kind !== 'insert' && rf.kind !== 'update') return undefined;
  const tt = reg.of(rf.table);
  const input = rf.kind === 'insert' ? tt.insertInput : tt.updateInput;
  return input && Object.keys(input.getFields()).length === 0 ? input.name : undefined;
}

/** The definition of one root field (its name comes from introspect/root-fields.ts). */
function rootFieldConfig(reg: TypeRegistry, rf: RootField): GraphQLFieldConfig<unknown, unknown> {
  if (rf.kind === 'node')
    return {
      type: reg.shared.node,
      description: 'Retrieve a record by its `ID`',
      args: { nodeId: { type: new GraphQLNonNull(GraphQLID), description: "The record's `ID`" } },
    };
  if (rf.kind === 'function') {
    const f = rf.func;
    const o = reg.functionOutput(f);
    const args: GraphQLFieldConfigArgumentMap = {};
    for (const a of f.args) {
      const t = reg.inputOf(a.type);
      args[a.fieldName] = { type: a.hasDefault ? t : new GraphQLNonNull(t), defaultValue: a.defaultValue };
    }
    Object.assign(args, o.args);
    return { type: o.type, args, description: f.description ?? undefined };
  }
  if (rf.kind === 'changes') throw new Error('internal error: a change stream is built by ChangeTypes');
  const t = rf.table;
  const tt = reg.of(t);
  const filter = {
    type: tt.filter,
    description: "Restricts the mutation's impact to records matching the criteria",
  };
  const atMost = {
    type: new GraphQLNonNull(GraphQLInt),
    defaultValue: 1,
    description: 'The maximum number of records in the collection permitted to be affected',
  };
  switch (rf.kind) {
    case 'collection':
      return {
        type: new GraphQLNonNull(tt.connection),
        args: reg.connectionArgs(t),
        description: `A pagable collection of type \`${t.typeName}\``,
      };
    case 'byPk': {
      const args: GraphQLFieldConfigArgumentMap = {};
      for (const c of pkColumns(t)) args[c.fieldName] = { type: new GraphQLNonNull(reg.inputOf(c.type)) };
      return {
        type: tt.node,
        args,
        description: `Retrieve a record of type \`${t.typeName}\` by its primary key`,
      };
    }
    case 'insert':
      return {
        type: required(tt.insertResponse),
        description: `Adds one or more \`${t.typeName}\` records to the collection`,
        args: {
          objects: {
            type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(required(tt.insertInput)))),
          },
          ...(tt.onConflict ? { onConflict: { type: tt.onConflict } } : {}),
        },
      };
    case 'update':
      return {
        type: new GraphQLNonNull(required(tt.updateResponse)),
        description: `Updates zero or more records in the \`${t.typeName}\` collection`,
        args: {
          set: {
            type: new GraphQLNonNull(required(tt.updateInput)),
            description: 'Fields that are set will be updated for all records matching the `filter`',
          },
          filter,
          atMost,
        },
      };
    case 'delete':
      return {
        type: new GraphQLNonNull(required(tt.deleteResponse)),
        description: `Deletes zero or more records from the \`${t.typeName}\` collection`,
        args: { filter, atMost },
      };
  }
}

/** A mutation's type, which the type registry makes whenever root-fields.ts lists the mutation. */
function required<T>(type: T | undefined): T {
  if (type === undefined) throw new Error('internal error: a mutation root field without its types');
  return type;
}
