/**
 * ConnectionPlan → one correlated subquery whose page CTE holds exactly the page's rows
 * (`limit`/`offset`; read from a CTE of one row more when a pageInfo field asks whether rows
 * follow the page), with only the columns the selection reads. Cursors, pageInfo probes,
 * totalCount and aggregates are computed only when selected.
 */
import type {
  AggregateFieldPlan,
  ConnectionFieldPlan,
  ConnectionPlan,
  NodePlan,
  PageInfoFieldPlan,
} from '../plan/plan-types.js';
import { filterSql } from './filter.js';
import { col, jsonOf } from './json-value.js';
import { nodeObjectSql } from './node.js';
import { cursorCondition, cursorSql, keyExpr, orderSql, pageKeyColumn } from './order.js';
import { jsonObject, quoteIdent, quoteLiteral, type SqlBuilder } from './sql-text.js';

export interface Source {
  /** A FROM item without alias: a table reference or a set-returning function call. */
  from: string;
  /** Join condition to the parent row, given this source's alias. */
  join?: (alias: string) => string;
  /** The row of alias as a value of the table's row type (when the alias alone is not one). */
  row?: (alias: string) => string;
}

/** The columns a node reads from its row (in selection order), and whether it needs the whole row. */
function nodeNeeds(node: NodePlan, columns: Set<string>): boolean {
  let wholeRow = false;
  for (const { field } of node.fields) {
    if (field.kind === 'nodeId') for (const n of node.table.primaryKey) columns.add(n);
    else if (field.kind === 'column') columns.add(field.column.sqlName);
    else if (field.kind === 'toMany' || field.kind === 'toOne')
      for (const n of field.rel.localColumns) columns.add(n);
    else if (field.kind === 'computed') wholeRow = true;
  }
  return wholeRow;
}

export function connectionSql(sql: SqlBuilder, c: ConnectionPlan, src: Source): string {
  const { keys, cursor, backward, limit, offset: off } = c;
  /** WHERE for this connection's rows over alias `b` (join, filter, cursor). */
  const where = (b: string, withCursor: boolean) =>
    [
      src.join ? src.join(b) : '',
      filterSql(sql, c.filter, b),
      withCursor && cursor ? cursorCondition(sql, keys, cursor, b) : '',
    ]
      .filter((x) => x && x !== 'true')
      .join(' and ') || 'true';
  /** Rows on the other side of the cursor (they prove a page exists there). */
  const otherSide = () => {
    if (!cursor) return 'false';
    const b = sql.alias();
    return `exists (select 1 from ${src.from} as ${b} where ${where(b, false)} and ${cursorCondition(sql, keys, cursor, b)} is not true)`;
  };
  /**
   * A row beyond the page in query order: the rows CTE then reads one row more than the page
   * (`limit + 1`) and the page is its first `limit` rows, so the probe costs no second scan (nor a
   * second run of the table's row-level security) of the same rows.
   */
  let beyond = false;
  const beyondPage = () => {
    beyond = true;
    return `((select count(*) from ${rows}) > ${limit})`;
  };
  const anyRow = () => {
    const b = sql.alias();
    return `exists (select 1 from ${src.from} as ${b} where ${where(b, true)})`;
  };

  const a = sql.alias();
  const page = `${a}_p`;
  const rows = `${a}_x`;
  const displayOrder = orderSql(sql, keys, page, false, true);
  const columns = new Set<string>(keys.filter((k) => !k.via.length).map((k) => k.column.sqlName));
  let wholeRow = false;
  let needCursor = false;
  for (const { field } of c.fields)
    if (field.kind === 'edges')
      for (const e of field.fields)
        if (e.field.kind === 'node') wholeRow ||= nodeNeeds(e.field.node, columns);
  const fieldSql = (f: ConnectionFieldPlan): string => {
    switch (f.kind) {
      case 'typename':
        return `${quoteLiteral(f.name)}::text`;
      case 'edges': {
        const ep = f.fields.map(({ alias, field: e }): [string, string] => {
          if (e.kind === 'typename') return [alias, `${quoteLiteral(e.name)}::text`];
          if (e.kind === 'cursor') {
            needCursor = true;
            return [alias, `${page}.__c`];
          }
          return [alias, nodeObjectSql(sql, e.node, page, `${page}.__r`)];
        });
        return `coalesce((select json_agg(${jsonObject(ep)} order by ${displayOrder}) from ${page}), '[]'::json)`;
      }
      case 'pageInfo':
        return jsonObject(f.fields.map(({ alias, field: p }) => [alias, pageInfoSql(p)]));
      case 'totalCount': {
        const b = sql.alias();
        return `(select count(*) from ${src.from} as ${b} where ${where(b, false)})`;
      }
      case 'aggregate': {
        const b = sql.alias();
        return aggregateSql(f.fields, `${src.from} as ${b} where ${where(b, false)}`, b);
      }
    }
  };
  const pageInfoSql = (p: PageInfoFieldPlan): string => {
    switch (p) {
      case 'typename':
        return `'PageInfo'::text`;
      case 'hasNextPage':
        return backward ? otherSide() : beyondPage();
      case 'hasPreviousPage':
        return backward ? beyondPage() : off > 0 ? `(${anyRow()} or ${otherSide()})` : otherSide();
      case 'startCursor':
        needCursor = true;
        return `(select ${page}.__c from ${page} order by ${displayOrder} limit 1)`;
      case 'endCursor':
        needCursor = true;
        return `(select ${page}.__c from ${page} order by ${orderSql(sql, keys, page, true, true)} limit 1)`;
    }
  };
  const pairs = c.fields.map(({ alias, field }): [string, string] => [alias, fieldSql(field)]);
  const select = [...columns].map((n) => `${col(a, n)} as ${quoteIdent(n)}`);
  keys.forEach((k, i) => {
    if (k.via.length) select.push(`${keyExpr(sql, k, a)} as ${quoteIdent(pageKeyColumn(k, i))}`);
  });
  if (wholeRow) select.push(`${src.row ? src.row(a) : a} as __r`);
  if (needCursor) select.push(`${cursorSql(sql, keys, a)} as __c`);
  const query = (name: string, n: number) =>
    `${name} as (select ${select.join(', ') || '1 as __one'} from ${src.from} as ${a} where ${where(a, true)} order by ${orderSql(sql, keys, a, backward)} limit ${n}${off ? ` offset ${off}` : ''})`;
  const cte = beyond
    ? `${query(rows, limit + 1)}, ${page} as (select * from ${rows} order by ${orderSql(sql, keys, rows, backward, true)} limit ${limit})`
    : query(page, limit);
  return `(with ${cte} select ${jsonObject(pairs)})`;
}

function aggregateSql(
  fields: { alias: string; field: AggregateFieldPlan }[],
  fromWhere: string,
  b: string,
): string {
  const pairs = fields.map(({ alias, field: x }): [string, string] => {
    if (x.kind === 'typename') return [alias, `${quoteLiteral(x.name)}::text`];
    if (x.kind === 'count') return [alias, 'count(*)'];
    const kind = x.aggregate.toLowerCase();
    const inner = x.fields.map(({ alias: sa, field: s }): [string, string] => {
      if (s.kind === 'typename') return [sa, `${quoteLiteral(s.name)}::text`];
      const expr = col(b, s.column.sqlName);
      if (kind === 'avg') return [sa, `avg((${expr})::numeric)`];
      if (kind === 'sum' || ['float4', 'float8', 'numeric', 'int8'].includes(s.column.type.baseName))
        return [sa, `${kind}(${expr})`];
      return [sa, jsonOf(`${kind}(${expr})`, s.column.type)];
    });
    return [alias, jsonObject(inner)];
  });
  return `(select ${jsonObject(pairs)} from ${fromWhere})`;
}
