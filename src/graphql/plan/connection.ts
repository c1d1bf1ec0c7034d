/**
 * Connections (collections, to-many relationships, set-returning functions): pagination
 * arguments, order, cursor, filter and the selected connection fields → a ConnectionPlan.
 */
import type { Table } from '../introspect/model.js';
import {
  type AggregateKind,
  aggregateResultType,
  aggregateType,
  connectionType,
  edgeType,
} from '../introspect/naming.js';
import { minMaxColumns, sumAvgColumns } from '../introspect/rules.js';
import { fail } from './errors.js';
import { buildFilter } from './filter.js';
import { nodePlan } from './node.js';
import { decodeCursor, orderKeys } from './order.js';
import type {
  AggregateFieldPlan,
  ConnectionFieldPlan,
  ConnectionPlan,
  EdgeFieldPlan,
  FilterPlan,
  PageInfoFieldPlan,
} from './plan-types.js';
import { argsOf, collectFields, type Ctx, type Field } from './selection.js';

/** The arguments of every connection field. */
export const CONNECTION_ARGS = ['first', 'last', 'before', 'after', 'offset', 'filter', 'orderBy'];

const AGGREGATES: Record<string, AggregateKind> = { sum: 'Sum', avg: 'Avg', min: 'Min', max: 'Max' };

/** A paging argument: a non-negative Int, or undefined when absent. */
export function unsigned(v: unknown, name: string): number | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) fail('Invalid input for Int type');
  if ((v as number) < 0) fail(`\`${name}\` must be an unsigned integer`);
  return v as number;
}

export function connectionPlan(ctx: Ctx, table: Table, field: Field): ConnectionPlan {
  const args = argsOf(field, ctx, CONNECTION_ARGS);
  const first = unsigned(args.first, 'first');
  const last = unsigned(args.last, 'last');
  const offset = unsigned(args.offset, 'offset');
  const before = args.before ?? undefined;
  const after = args.after ?? undefined;
  if (first !== undefined && last !== undefined) fail('only one of "first" and "last" may be provided');
  if (before !== undefined && after !== undefined) fail('only one of "before" and "after" may be provided');
  if (first !== undefined && before !== undefined) fail('"first" may only be used with "after"');
  if (last !== undefined && after !== undefined) fail('"last" may only be used with "before"');
  if (offset !== undefined && (last !== undefined || before !== undefined))
    fail('"offset" may only be used with "first" and "after"');
  const backward = last !== undefined || before !== undefined;
  const limit = Math.min(first ?? last ?? table.maxRows, table.maxRows);
  const off = offset ?? 0;
  const keys = orderKeys(table, args.orderBy);
  const cursor =
    after !== undefined
      ? decodeCursor(after, keys, true)
      : before !== undefined
        ? decodeCursor(before, keys, false)
        : undefined;
  // The filter is validated where the SQL first needs it, so that errors come in pg_graphql's order.
  let filterPlan: FilterPlan | undefined;
  const filter = () => {
    filterPlan ??= buildFilter(table, args.filter);
    return filterPlan;
  };

  const typeName = connectionType(table.typeName);
  const edgeTypeName = edgeType(table.typeName);
  const fields: ConnectionPlan['fields'] = [];
  for (const f of collectFields(field.selections, typeName, ctx)) {
    let plan: ConnectionFieldPlan;
    if (f.name === '__typename') plan = { kind: 'typename', name: typeName };
    else if (f.name === 'edges') {
      const edgeFields = collectFields(f.selections, edgeTypeName, ctx);
      for (const e of edgeFields) if (e.name === 'node') collectFields(e.selections, table.typeName, ctx);
      plan = {
        kind: 'edges',
        fields: edgeFields.map((e) => {
          let ef: EdgeFieldPlan;
          if (e.name === '__typename') ef = { kind: 'typename', name: edgeTypeName };
          else if (e.name === 'cursor') ef = { kind: 'cursor' };
          else if (e.name === 'node')
            ef = { kind: 'node', node: nodePlan(ctx, table, e.selections, 'single') };
          else return fail(`Unknown field '${e.name}' on type '${edgeTypeName}'`);
          return { alias: e.alias, field: ef };
        }),
      };
    } else if (f.name === 'pageInfo') {
      plan = {
        kind: 'pageInfo',
        fields: collectFields(f.selections, 'PageInfo', ctx).map((p) => {
          let pf: PageInfoFieldPlan;
          if (p.name === '__typename') pf = 'typename';
          else if (p.name === 'hasNextPage') {
            if (!backward || cursor) filter();
            pf = 'hasNextPage';
          } else if (p.name === 'hasPreviousPage') {
            if (backward || off > 0 || cursor) filter();
            pf = 'hasPreviousPage';
          } else if (p.name === 'startCursor' || p.name === 'endCursor') pf = p.name;
          else return fail(`Unknown field '${p.name}' on type 'PageInfo'`);
          return { alias: p.alias, field: pf };
        }),
      };
    } else if (f.name === 'totalCount' && table.totalCount) {
      filter();
      plan = { kind: 'totalCount' };
    } else if (f.name === 'aggregate') {
      if (!table.aggregate) fail('enable the aggregate directive to use aggregates');
      filter();
      plan = { kind: 'aggregate', fields: aggregateFields(ctx, table, f) };
    } else
      fail(
        table.schemaInfo.strata.detailedErrors
          ? `unknown field in connection: "${f.name}" is not a field of ${typeName}`
          : 'unknown field in connection',
      );
    fields.push({ alias: f.alias, field: plan });
  }
  return { table, limit, offset: off, backward, keys, cursor, filter: filter(), fields };
}

function aggregateFields(ctx: Ctx, table: Table, f: Field): { alias: string; field: AggregateFieldPlan }[] {
  const typeName = aggregateType(table.typeName);
  return collectFields(f.selections, typeName, ctx).map((x) => {
    if (x.name === '__typename') return { alias: x.alias, field: { kind: 'typename', name: typeName } };
    if (x.name === 'count') return { alias: x.alias, field: { kind: 'count' } };
    const kind = Object.hasOwn(AGGREGATES, x.name) ? AGGREGATES[x.name] : undefined;
    if (!kind) return fail(`Unknown field "${x.name}" on type ${typeName}`);
    const cols = kind === 'Sum' || kind === 'Avg' ? sumAvgColumns(table) : minMaxColumns(table);
    const resultType = aggregateResultType(table.typeName, kind);
    if (!cols.length) fail(`Unknown field "${x.name}" on type ${typeName}`);
    const fields = collectFields(x.selections, resultType, ctx).map((s) => {
      if (s.name === '__typename')
        return { alias: s.alias, field: { kind: 'typename' as const, name: resultType } };
      const column = cols.find((cc) => cc.fieldName === s.name);
      if (!column) return fail(`Unknown or invalid field "${s.name}" selected on type "${resultType}"`);
      return { alias: s.alias, field: { kind: 'column' as const, column } };
    });
    return { alias: x.alias, field: { kind: 'columns', aggregate: kind, fields } };
  });
}
