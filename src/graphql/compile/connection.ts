/** Connections: one correlated subquery with a page CTE; pageInfo, totalCount and aggregates only when selected. */
import type { Table } from '../introspect/model.js';
import { minMaxColumns, selectableColumns, sumAvgColumns } from '../introspect/rules.js';
import type { Comp } from './context.js';
import { fail } from './errors.js';
import { compileFilter } from './filter.js';
import { col, jsonOf } from './json-value.js';
import { nodeObject } from './node.js';
import { cursorCondition, cursorSql, decodeCursor, orderKeys, orderSql } from './order.js';
import { argsOf, collectFields, type Field } from './selection.js';
import { structuralNumber } from './values.js';
import { jsonObject, quoteIdent, quoteLiteral } from './sql.js';

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

export function connectionSql(comp: Comp, table: Table, field: Field, src: Source, extraArgs: string[] = []): string {
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
  if (offset !== undefined && (last !== undefined || before !== undefined)) fail('"offset" may only be used with "first" and "after"');
  const backward = last !== undefined || before !== undefined;
  const limit = Math.min(first ?? last ?? table.maxRows, table.maxRows);
  const off = offset ?? 0;

  const a = comp.sql.alias();
  const keys = orderKeys(table, args.orderBy);
  const join = src.join ? src.join(a) : 'true';
  const filter = compileFilter(comp, table, args.filter, a);
  const cursorVals = after !== undefined ? decodeCursor(after, keys) : before !== undefined ? decodeCursor(before, keys) : undefined;
  const cursorCond = cursorVals ? cursorCondition(comp, keys, cursorVals, a, after !== undefined) : 'true';

  const page = `${a}_p`;
  // With SELECT on every column the page carries the whole row (computed fields need it);
  // otherwise only the permitted columns, referenced through the page's own row.
  const row = table.canSelectAll ? `${page}.__r` : page;
  const rowSelect = table.canSelectAll ? `${a} as __r` : selectableColumns(table).map((c) => col(a, c.sqlName) + ' as ' + quoteIdent(c.sqlName)).join(', ') || 'null as __r';
  const typeName = `${table.typeName}Connection`;
  const fields = collectFields(field.selections, typeName, comp);
  const pairs: [string, string][] = [];
  let needsExtra = false;
  const inPage = `${page}.__n > ${off} and ${page}.__n <= ${off + limit}`;
  const displayOrder = backward ? `${page}.__n desc` : `${page}.__n`;
  const cursorOfN = (which: 'min' | 'max') => `(select ${page}.__c from ${page} where ${inPage} order by ${page}.__n ${which === 'min' ? 'asc' : 'desc'} limit 1)`;
  const otherSide = () => {
    if (!cursorVals) return 'false';
    const b = comp.sql.alias();
    const cond = cursorCondition(comp, keys, cursorVals, b, after !== undefined);
    return `exists (select 1 from ${src.from} as ${b} where ${src.join ? src.join(b) : 'true'} and ${compileFilter(comp, table, args.filter, b)} and not ${cond})`;
  };
  for (const f of fields) {
    if (f.name === '__typename') pairs.push([f.alias, `to_jsonb(${quoteLiteral(typeName)}::text)`]);
    else if (f.name === 'edges') {
      const edgeType = `${table.typeName}Edge`;
      const ef = collectFields(f.selections, edgeType, comp);
      const ep: [string, string][] = ef.map((e) => {
        if (e.name === '__typename') return [e.alias, `to_jsonb(${quoteLiteral(edgeType)}::text)`];
        if (e.name === 'cursor') return [e.alias, `to_jsonb(${page}.__c)`];
        if (e.name === 'node') return [e.alias, nodeObject(comp, table, e.selections, row)];
        return fail(`Unknown field '${e.name}' on type '${edgeType}'`);
      });
      pairs.push([f.alias, `coalesce((select jsonb_agg(${jsonObject(ep)} order by ${displayOrder}) from ${page} where ${inPage}), '[]'::jsonb)`]);
    } else if (f.name === 'pageInfo') {
      const pf = collectFields(f.selections, 'PageInfo', comp);
      const pp: [string, string][] = pf.map((p) => {
        const more = `((select count(*) from ${page}) > ${off + limit})`;
        switch (p.name) {
          case '__typename': return [p.alias, `to_jsonb('PageInfo'::text)`];
          case 'hasNextPage':
            if (!backward) needsExtra = true;
            return [p.alias, `to_jsonb(${backward ? otherSide() : more})`];
          case 'hasPreviousPage':
            if (backward) needsExtra = true;
            return [p.alias, `to_jsonb(${backward ? more : off > 0 ? `exists (select 1 from ${page} where ${page}.__n <= ${off}) or ${otherSide()}` : otherSide()})`];
          case 'startCursor': return [p.alias, `to_jsonb(${cursorOfN(backward ? 'max' : 'min')})`];
          case 'endCursor': return [p.alias, `to_jsonb(${cursorOfN(backward ? 'min' : 'max')})`];
          default: return fail(`Unknown field '${p.name}' on type 'PageInfo'`);
        }
      });
      pairs.push([f.alias, jsonObject(pp)]);
    } else if (f.name === 'totalCount' && table.totalCount) {
      const b = comp.sql.alias();
      pairs.push([f.alias, `to_jsonb((select count(*) from ${src.from} as ${b} where ${src.join ? src.join(b) : 'true'} and ${compileFilter(comp, table, args.filter, b)}))`]);
    } else if (f.name === 'aggregate') {
      if (!table.aggregate) fail('enable the aggregate directive to use aggregates');
      pairs.push([f.alias, aggregateSql(comp, table, f, src, args.filter)]);
    } else fail('unknown field in connection');
  }
  const fetch = off + limit + (needsExtra ? 1 : 0);
  const qorder = orderSql(keys, a, backward);
  const cte = `${page} as (select ${rowSelect}, row_number() over (order by ${qorder}) as __n, ${cursorSql(keys, a)} as __c from ${src.from} as ${a} where ${join} and ${filter} and ${cursorCond} order by ${qorder} limit ${fetch})`;
  return `(with ${cte} select ${jsonObject(pairs)})`;
}

function aggregateSql(comp: Comp, table: Table, f: Field, src: Source, filterArg: unknown): string {
  const b = comp.sql.alias();
  const typeName = `${table.typeName}Aggregate`;
  const fields = collectFields(f.selections, typeName, comp);
  const pairs: [string, string][] = [];
  for (const x of fields) {
    if (x.name === '__typename') pairs.push([x.alias, `to_jsonb(${quoteLiteral(typeName)}::text)`]);
    else if (x.name === 'count') pairs.push([x.alias, 'to_jsonb(count(*))']);
    else if (['sum', 'avg', 'min', 'max'].includes(x.name)) {
      const kind = x.name;
      const cols = kind === 'sum' || kind === 'avg' ? sumAvgColumns(table) : minMaxColumns(table);
      const resultType = `${table.typeName}${kind[0]!.toUpperCase()}${kind.slice(1)}AggregateResult`;
      if (!cols.length) fail(`Unknown field "${kind}" on type ${typeName}`);
      const inner = collectFields(x.selections, resultType, comp).map((s): [string, string] => {
        if (s.name === '__typename') return [s.alias, `to_jsonb(${quoteLiteral(resultType)}::text)`];
        const c = cols.find((cc) => cc.fieldName === s.name);
        if (!c) return fail(`Unknown or invalid field "${s.name}" selected on type "${resultType}"`);
        const expr = col(b, c.sqlName);
        if (kind === 'avg') return [s.alias, `to_jsonb(avg((${expr})::numeric))`];
        if (kind === 'sum' || ['float4', 'float8', 'numeric', 'int8'].includes(c.type.baseName)) return [s.alias, `to_jsonb(${kind}(${expr}))`];
        return [s.alias, jsonOf(`${kind}(${expr})`, c.type)];
      });
      pairs.push([x.alias, jsonObject(inner)]);
    } else fail(`Unknown field "${x.name}" on type ${typeName}`);
  }
  return `(select ${jsonObject(pairs)} from ${src.from} as ${b} where ${src.join ? src.join(b) : 'true'} and ${compileFilter(comp, table, filterArg, b)})`;
}
