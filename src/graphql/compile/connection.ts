/**
 * Connections: one correlated subquery whose page CTE holds exactly the page's rows (`limit`/
 * `offset`), with only the columns the selection reads. Cursors, pageInfo probes, totalCount and
 * aggregates are computed only when selected.
 */
import {
  aggregateResultType,
  aggregateType,
  connectionType,
  edgeType as edgeTypeName,
  type AggregateKind,
} from '../introspect/naming.js';
import type { Table } from '../introspect/model.js';
import { minMaxColumns, sumAvgColumns } from '../introspect/rules.js';
import type { Comp } from './context.js';
import { fail } from './errors.js';
import { compileFilter } from './filter.js';
import { col, jsonOf } from './json-value.js';
import { nodeNeeds, nodeObject } from './node.js';
import { cursorCondition, cursorSql, decodeCursor, orderKeys, orderSql } from './order.js';
import { argsOf, collectFields, type Field } from './selection.js';
import { jsonObject, quoteIdent, quoteLiteral } from './sql.js';
import { structuralNumber } from './values.js';

export interface Source {
  /** A FROM item without alias: a table reference or a set-returning function call. */
  from: string;
  /** Join condition to the parent row, given this source's alias. */
  join?: (alias: string) => string;
}

const ARGS = ['first', 'last', 'before', 'after', 'offset', 'filter', 'orderBy'];

function unsigned(v: unknown, name: string): number | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) fail('Invalid input for Int type');
  if ((v as number) < 0) fail(`\`${name}\` must be an unsigned integer`);
  return structuralNumber(v as number);
}

export function connectionSql(
  comp: Comp,
  table: Table,
  field: Field,
  src: Source,
  extraArgs: string[] = [],
): string {
  const args = argsOf(field, comp, [...ARGS, ...extraArgs]);
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
  const cursorVals =
    after !== undefined
      ? decodeCursor(after, keys)
      : before !== undefined
        ? decodeCursor(before, keys)
        : undefined;
  /** WHERE for this connection's rows over alias `b` (join, filter, cursor). */
  const where = (b: string, withCursor: boolean) =>
    [
      src.join ? src.join(b) : '',
      compileFilter(comp, table, args.filter, b),
      withCursor && cursorVals ? cursorCondition(comp, keys, cursorVals, b, after !== undefined) : '',
    ]
      .filter((x) => x && x !== 'true')
      .join(' and ') || 'true';
  /** Rows on the other side of the cursor (they prove a page exists there). */
  const otherSide = () => {
    if (!cursorVals) return 'false';
    const b = comp.sql.alias();
    return `exists (select 1 from ${src.from} as ${b} where ${where(b, false)} and not ${cursorCondition(comp, keys, cursorVals, b, after !== undefined)})`;
  };
  /** A row beyond the page in query order. */
  const beyondPage = () => {
    const b = comp.sql.alias();
    return `exists (select 1 from ${src.from} as ${b} where ${where(b, true)} order by ${orderSql(keys, b, backward)} offset ${off + limit})`;
  };
  const anyRow = () => {
    const b = comp.sql.alias();
    return `exists (select 1 from ${src.from} as ${b} where ${where(b, true)})`;
  };

  const a = comp.sql.alias();
  const page = `${a}_p`;
  const typeName = connectionType(table.typeName);
  const edgeType = edgeTypeName(table.typeName);
  const fields = collectFields(field.selections, typeName, comp);
  const displayOrder = orderSql(keys, page, false);
  const columns = new Set<string>(keys.map((k) => k.column.sqlName));
  let wholeRow = false;
  let needCursor = false;
  const pairs: [string, string][] = [];
  for (const f of fields) {
    if (f.name === '__typename') pairs.push([f.alias, `${quoteLiteral(typeName)}::text`]);
    else if (f.name === 'edges') {
      const edgeFields = collectFields(f.selections, edgeType, comp);
      for (const e of edgeFields) {
        if (e.name !== 'node') continue;
        const needs = nodeNeeds(comp, table, e.selections);
        for (const c of needs.columns) columns.add(c);
        wholeRow ||= needs.wholeRow;
      }
      const ep: [string, string][] = edgeFields.map((e) => {
        if (e.name === '__typename') return [e.alias, `${quoteLiteral(edgeType)}::text`];
        if (e.name === 'cursor') {
          needCursor = true;
          return [e.alias, `${page}.__c`];
        }
        if (e.name === 'node')
          return [e.alias, nodeObject(comp, table, e.selections, page, 'single', `${page}.__r`)];
        return fail(`Unknown field '${e.name}' on type '${edgeType}'`);
      });
      pairs.push([
        f.alias,
        `coalesce((select json_agg(${jsonObject(ep)} order by ${displayOrder}) from ${page}), '[]'::json)`,
      ]);
    } else if (f.name === 'pageInfo') {
      const pp: [string, string][] = collectFields(f.selections, 'PageInfo', comp).map((p) => {
        switch (p.name) {
          case '__typename':
            return [p.alias, `'PageInfo'::text`];
          case 'hasNextPage':
            return [p.alias, backward ? otherSide() : beyondPage()];
          case 'hasPreviousPage':
            return [
              p.alias,
              backward ? beyondPage() : off > 0 ? `(${anyRow()} or ${otherSide()})` : otherSide(),
            ];
          case 'startCursor':
            needCursor = true;
            return [p.alias, `(select ${page}.__c from ${page} order by ${displayOrder} limit 1)`];
          case 'endCursor':
            needCursor = true;
            return [
              p.alias,
              `(select ${page}.__c from ${page} order by ${orderSql(keys, page, true)} limit 1)`,
            ];
          default:
            return fail(`Unknown field '${p.name}' on type 'PageInfo'`);
        }
      });
      pairs.push([f.alias, jsonObject(pp)]);
    } else if (f.name === 'totalCount' && table.totalCount) {
      const b = comp.sql.alias();
      pairs.push([f.alias, `(select count(*) from ${src.from} as ${b} where ${where(b, false)})`]);
    } else if (f.name === 'aggregate') {
      if (!table.aggregate) fail('enable the aggregate directive to use aggregates');
      const b = comp.sql.alias();
      pairs.push([f.alias, aggregateSql(comp, table, f, `${src.from} as ${b} where ${where(b, false)}`, b)]);
    } else fail('unknown field in connection');
  }
  const select = [...columns].map((c) => `${col(a, c)} as ${quoteIdent(c)}`);
  if (wholeRow) select.push(`${a} as __r`);
  if (needCursor) select.push(`${cursorSql(keys, a)} as __c`);
  const cte = `${page} as (select ${select.join(', ') || '1 as __one'} from ${src.from} as ${a} where ${where(a, true)} order by ${orderSql(keys, a, backward)} limit ${limit}${off ? ` offset ${off}` : ''})`;
  return `(with ${cte} select ${jsonObject(pairs)})`;
}

const AGGREGATE_KINDS: Record<string, AggregateKind> = { sum: 'Sum', avg: 'Avg', min: 'Min', max: 'Max' };

function aggregateSql(comp: Comp, table: Table, f: Field, fromWhere: string, b: string): string {
  const typeName = aggregateType(table.typeName);
  const pairs: [string, string][] = [];
  for (const x of collectFields(f.selections, typeName, comp)) {
    if (x.name === '__typename') pairs.push([x.alias, `${quoteLiteral(typeName)}::text`]);
    else if (x.name === 'count') pairs.push([x.alias, 'count(*)']);
    else if (x.name in AGGREGATE_KINDS) {
      const kind = x.name as keyof typeof AGGREGATE_KINDS;
      const cols = kind === 'sum' || kind === 'avg' ? sumAvgColumns(table) : minMaxColumns(table);
      const resultType = aggregateResultType(table.typeName, AGGREGATE_KINDS[kind]);
      if (!cols.length) fail(`Unknown field "${kind}" on type ${typeName}`);
      const inner = collectFields(x.selections, resultType, comp).map((s): [string, string] => {
        if (s.name === '__typename') return [s.alias, `${quoteLiteral(resultType)}::text`];
        const c = cols.find((cc) => cc.fieldName === s.name);
        if (!c) return fail(`Unknown or invalid field "${s.name}" selected on type "${resultType}"`);
        const expr = col(b, c.sqlName);
        if (kind === 'avg') return [s.alias, `avg((${expr})::numeric)`];
        if (kind === 'sum' || ['float4', 'float8', 'numeric', 'int8'].includes(c.type.baseName))
          return [s.alias, `${kind}(${expr})`];
        return [s.alias, jsonOf(`${kind}(${expr})`, c.type)];
      });
      pairs.push([x.alias, jsonObject(inner)]);
    } else fail(`Unknown field "${x.name}" on type ${typeName}`);
  }
  return `(select ${jsonObject(pairs)} from ${fromWhere})`;
}
