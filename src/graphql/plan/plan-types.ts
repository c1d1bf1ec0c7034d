/**
 * The plan of one top-level field: what the builder (plan/) validated, typed for the transpiler
 * (transpile/), which turns it into SQL without any further check. Values are parameters; a
 * parameter that is exactly one request variable names it, so a plan's SQL can be reused with
 * other values of that variable (execute/plan-template.ts).
 */
import type { Column, Func, Relationship, Table } from '../introspect/model.js';
import type { AggregateKind, MutationKind } from '../introspect/naming.js';
import type { ToManyQuantifier } from '../introspect/rules.js';

/** A bound text parameter cast to `cast`; `variable` when its text is that variable's value as it is. */
export interface Param {
  text: string | null;
  cast: string;
  variable?: string;
}

/** A sort key of a connection (orderBy entries, then the primary key). */
export interface OrderKey {
  /** Strata `related_filters`: the to-one relationships leading to `column`'s table (empty: this table). */
  via: Relationship[];
  column: Column;
  desc: boolean;
  nullsFirst: boolean;
}

/** A decoded `before`/`after` cursor. */
export interface CursorPlan {
  /** The cursor's values, for null checks; compared values are read from `json` in SQL. */
  values: unknown[];
  /** The cursor's JSON text, bound once per condition (no precision lost in JS). */
  json: string;
  /** Rows after the cursor (`after`) or before it (`before`). */
  after: boolean;
}

/** A boolean over a row. */
export type FilterPlan =
  | { kind: 'true' }
  | { kind: 'all'; parts: FilterPlan[] }
  | { kind: 'group'; op: 'and' | 'or'; parts: FilterPlan[] }
  | { kind: 'not'; inner: FilterPlan }
  | { kind: 'null'; column: Column; negated: boolean }
  | { kind: 'false' }
  | { kind: 'compare'; column: Column; op: string; value: Param; columnAsText: boolean }
  | { kind: 'list'; column: Column; op: string; value: Param | null }
  | { kind: 'in'; column: Column; value: Param }
  | { kind: 'pk'; match: PkMatch }
  /** Strata `related_filters`: rows of `rel` (the target's RLS applies) matching `inner`; to-one uses `some`. */
  | { kind: 'related'; rel: Relationship; quantifier: ToManyQuantifier; inner: FilterPlan };

/** Primary key columns equal to parameters. */
export interface PkMatch {
  columns: Column[];
  values: Param[];
}

export type NodeFieldPlan =
  | { kind: 'typename'; name: string }
  | { kind: 'nodeId' }
  | { kind: 'column'; column: Column }
  | { kind: 'computed'; fn: Func; value: FunctionResultPlan }
  | { kind: 'toMany'; rel: Relationship; connection: ConnectionPlan }
  | { kind: 'toOne'; rel: Relationship; node: NodePlan };

/** A row as a JSON object of the selected fields. */
export interface NodePlan {
  table: Table;
  fields: { alias: string; field: NodeFieldPlan }[];
}

/** What a function call's value becomes: a scalar, a row object, or a connection over its rows. */
export type FunctionResultPlan =
  | { kind: 'scalar'; fn: Func }
  /** Strata `setof_scalars`: `limit` values of a set-returning function after `offset`, in its order. */
  | { kind: 'scalarList'; fn: Func; limit: number; offset: number }
  | { kind: 'row'; node: NodePlan }
  | { kind: 'connection'; connection: ConnectionPlan };

export type EdgeFieldPlan =
  | { kind: 'typename'; name: string }
  | { kind: 'cursor' }
  | { kind: 'node'; node: NodePlan };

export type PageInfoFieldPlan = 'typename' | 'hasNextPage' | 'hasPreviousPage' | 'startCursor' | 'endCursor';

export type AggregateFieldPlan =
  | { kind: 'typename'; name: string }
  | { kind: 'count' }
  | {
      kind: 'columns';
      aggregate: AggregateKind;
      fields: {
        alias: string;
        field: { kind: 'typename'; name: string } | { kind: 'column'; column: Column };
      }[];
    };

export type ConnectionFieldPlan =
  | { kind: 'typename'; name: string }
  | { kind: 'edges'; fields: { alias: string; field: EdgeFieldPlan }[] }
  | { kind: 'pageInfo'; fields: { alias: string; field: PageInfoFieldPlan }[] }
  | { kind: 'totalCount' }
  | { kind: 'aggregate'; fields: { alias: string; field: AggregateFieldPlan }[] };

/** A page of rows with the selected connection fields. */
export interface ConnectionPlan {
  table: Table;
  limit: number;
  offset: number;
  backward: boolean;
  keys: OrderKey[];
  cursor?: CursorPlan;
  filter: FilterPlan;
  fields: { alias: string; field: ConnectionFieldPlan }[];
}

export interface MutationResponsePlan {
  kind: MutationKind;
  table: Table;
  fields: (
    | { alias: string; kind: 'typename'; name: string }
    | { alias: string; kind: 'affectedCount' }
    | { alias: string; kind: 'records'; node: NodePlan }
  )[];
}

/**
 * Strata `nested_mutations`: one record of a nested insert, created by its own data-modifying CTE
 * (so that the keys PostgreSQL generates for it reach exactly its related records).
 */
export interface InsertRowPlan {
  table: Table;
  /** The input's columns (the others take their defaults). */
  values: { column: Column; value: Param }[];
  /** Created first: this record's foreign key columns (`rel.localColumns`) copy their keys. */
  parents: { rel: Relationship; row: InsertRowPlan }[];
  /** Created after: their foreign key columns (`rel.targetColumns`) copy this record's key. */
  children: { rel: Relationship; rows: InsertRowPlan[] }[];
}

/** One top-level field: each kind is one SQL statement returning the field's JSON. */
export type RootPlan =
  | { kind: 'collection'; connection: ConnectionPlan }
  | { kind: 'byPk'; table: Table; match: PkMatch; node: NodePlan }
  | { kind: 'node'; table: Table; match: PkMatch; node: NodePlan }
  | { kind: 'nodeNotFound' }
  | { kind: 'function'; fn: Func; args: { sqlName: string; value: Param }[]; result: FunctionResultPlan }
  | {
      kind: 'insert';
      table: Table;
      columns: Column[];
      rows: (Param | 'default')[][];
      /** Strata `upsert`: ON CONFLICT (target) DO UPDATE SET update… WHERE filter; no update: DO NOTHING. */
      onConflict?: { target: Column[]; update: Column[]; filter: FilterPlan };
      /** Strata `nested_mutations`: the response's relationships read the inserted rows too. */
      readsInserted?: boolean;
      response: MutationResponsePlan;
    }
  /** Strata `nested_mutations`: an insert whose objects create related records too. */
  | { kind: 'nestedInsert'; table: Table; rows: InsertRowPlan[]; response: MutationResponsePlan }
  | {
      kind: 'update';
      table: Table;
      set: { column: Column; value: Param }[];
      filter: FilterPlan;
      atMost: number;
      response: MutationResponsePlan;
    }
  | { kind: 'delete'; table: Table; filter: FilterPlan; atMost: number; response: MutationResponsePlan };
