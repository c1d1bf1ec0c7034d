/** The catalog model: plain data reflected from pg_catalog, with every GraphQL naming/typing decision made. */
import type { ChangeTable } from './change-streams.js';

/** How a SQL type appears in GraphQL. */
export type ScalarName =
  | 'Int'
  | 'BigInt'
  | 'Float'
  | 'BigFloat'
  | 'String'
  | 'Boolean'
  | 'UUID'
  | 'Date'
  | 'Time'
  | 'Datetime'
  | 'JSON'
  | 'Opaque'
  | 'ID'
  | 'Cursor';

export interface SqlType {
  oid: number;
  /** Text usable in a cast, e.g. "integer", "public.my_enum", "text[]". */
  castName: string;
  /** Base (non-array) pg type name after domains are resolved, e.g. int4, text, my_enum. */
  baseName: string;
  isArray: boolean;
  /** Set when the (element) type is an enum visible in GraphQL. */
  enumRef?: EnumType;
  /** Composite (row) type: its relation oid. */
  compositeRelid?: number;
  /** Pseudo types, records, etc. */
  pseudo: boolean;
  /** GraphQL scalar of the (element) type, when not an enum. */
  scalar: ScalarName;
  /**
   * A domain (or an array of one) typed by pg_graphql's rule: `Opaque`, without its base type's
   * output conversion (a domain over bigint is a JSON number, as pg_graphql writes it) or aggregates.
   */
  opaqueDomain?: boolean;
  /**
   * A domain over an array, by pg_graphql's rule: no GraphQL type (its column has no field, filter
   * or input; `pseudo` is set), but a sort key of `<Type>OrderBy`, as pg_graphql goes by type name there.
   */
  untypedDomain?: boolean;
  /** Max length for varchar(n)/char(n) inputs. */
  maxLength?: number;
}

/**
 * Strata's extensions beyond pg_graphql, each off unless the schema's comment directive turns it
 * on: `@graphql({"strata": {"upsert": true, "related_filters": true, ...}})`.
 */
export interface StrataFeatures {
  upsert: boolean;
  nestedMutations: boolean;
  relatedFilters: boolean;
  partitionedTables: boolean;
  /** Functions returning `setof` a scalar (or array) as list fields. */
  setofScalars: boolean;
  /** Errors whose pg_graphql wording names nothing (`unknown field in connection`) name the field. */
  detailedErrors: boolean;
  /** Columns, arguments and results of a domain type are typed as the domain's base type (pg_graphql: `Opaque`). */
  domainBaseTypes: boolean;
  /** A `Subscription` root: live queries of the collections and `ByPk` fields (src/realtime/). */
  subscriptions: boolean;
}

export interface SchemaInfo {
  oid: number;
  name: string;
  inflect: boolean;
  maxRows: number;
  introspection: boolean;
  strata: StrataFeatures;
}

export interface Column {
  num: number;
  sqlName: string;
  fieldName: string;
  description: string | null;
  type: SqlType;
  notNull: boolean;
  /**
   * Holds no NULL (a validated NOT NULL of a table): its sort needs no NULLS clause, so an index in
   * either direction serves a `DescNullsLast` / `AscNullsFirst` order.
   */
  nullFree: boolean;
  hasDefault: boolean;
  /** Owns a sequence (serial, or identity of either kind): pg_graphql leaves it out of mutation inputs. */
  isSerial: boolean;
  generated: boolean;
  canSelect: boolean;
  canInsert: boolean;
  canUpdate: boolean;
}

export interface Relationship {
  /** The GraphQL field name on the table that owns this relationship entry. */
  fieldName: string;
  /** The table at the other end. */
  target: Table;
  /** Columns on this table / on the target, pairwise. */
  localColumns: string[];
  targetColumns: string[];
  /** toOne: a single object; toMany: a connection. */
  kind: 'toOne' | 'toMany';
  /** True when `localColumns` are this table's foreign key (the target holds the referenced key). */
  referencing: boolean;
  nonNull: boolean;
}

export interface Table {
  oid: number;
  schema: string;
  sqlName: string;
  kind: string;
  /** GraphQL base type name, e.g. "BlogPost". */
  typeName: string;
  description: string | null;
  rls: boolean;
  schemaInfo: SchemaInfo;
  columns: Column[];
  /**
   * Columns whose GraphQL names are not valid names: no field anywhere, but a primary key may use
   * them (nodeId, cursors, ordering), and their privileges count where pg_graphql asks about any
   * column (is_any_column_selectable / _insertable / _updatable).
   */
  unnamedColumns: Column[];
  /** Primary key column SQL names (real or directive), empty when none. */
  primaryKey: string[];
  /** Unique column sets (non-partial), SQL names. */
  uniques: string[][];
  /**
   * Unique constraints and indexes usable as `ON CONFLICT` targets (not partial, not on
   * expressions, not deferrable), by index name; the primary key's included.
   */
  conflictTargets: { name: string; columns: string[] }[];
  totalCount: boolean;
  aggregate: boolean;
  maxRows: number;
  canDelete: boolean;
  canSelectAll: boolean;
  relationships: Relationship[];
  computed: Func[];
}

export interface EnumType {
  oid: number;
  schema: string;
  sqlName: string;
  name: string;
  description: string | null;
  /** label → GraphQL value name, in sort order. */
  values: { label: string; name: string }[];
}

export interface FuncArg {
  sqlName: string;
  fieldName: string;
  type: SqlType;
  hasDefault: boolean;
  /** The default as a GraphQL value (for introspection), when it is a simple literal. */
  defaultValue?: unknown;
}

export interface Func {
  oid: number;
  schema: string;
  sqlName: string;
  fieldName: string;
  description: string | null;
  volatility: 'i' | 's' | 'v';
  setof: boolean;
  /** True for `setof X rows 1` computed relations (single object). */
  rowsOne: boolean;
  args: FuncArg[];
  returns: SqlType;
  /** When returning a table's row type (or setof). */
  returnTable?: Table;
  /** Computed field: the table whose row type is the only argument. */
  computedOn?: Table;
  /** Strata `setof_scalars`: the most values a list field holds (its schema's `max_rows`). */
  maxRows: number;
}

export interface Catalog {
  role: string;
  schemas: SchemaInfo[];
  tables: Table[];
  enums: EnumType[];
  functions: Func[];
  /** Enum labels that are not GraphQL names and have no `mappings` entry (pg_graphql shows them as they are). */
  invalidEnumLabels: { enumName: string; schema: string; sqlName: string; labels: string[] }[];
  /**
   * What a person should know about the reflected schema: relationships renamed because two would
   * share a name, tables left out because their type names clash with another's (see
   * relationship-names.ts, type-name-clashes.ts). `strata sdl` prints them as warnings.
   */
  notices: string[];
  /** Schema-load error (bad comment directive): every request answers with it. */
  loadError?: string;
  /** Strata `subscriptions`: the tables with a change stream (introspect/change-streams.ts). */
  changeStreams?: ReadonlyMap<Table, ChangeTable>;
  introspection: boolean;
}
