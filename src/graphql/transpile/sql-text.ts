/** SQL text assembly: bound text parameters, deterministic aliases, identifier quoting. */
import { quoteIdent, quoteLiteral } from '../../db/sql-text.js';
import type { Param } from '../plan/plan-types.js';
import type { Table } from '../introspect/model.js';

export { quoteIdent, quoteLiteral };

/** Rows read together with a table's own (see SqlBuilder.readAlso). */
interface ExtraRows {
  /** A FROM item with the columns the table's FROM item gives (`select *`, or `columns`). */
  rows: string;
  /** The columns the caller may select, when not all of them (read by name from the table). */
  columns?: string[];
  /** Whether readFrom gave it (its FROM item must then be defined). */
  read: boolean;
}

export class SqlBuilder {
  readonly params: (string | null)[] = [];
  /** Per parameter: the request variable whose value it is as it is (see plan/plan-types.ts). */
  readonly variables: (string | undefined)[] = [];
  private n = 0;
  private readonly extra = new Map<string, ExtraRows>();

  /**
   * From now on, reads of `t` (relationships, relationship filters and sort keys) see the rows of
   * `rows` too: an insert's response reads the rows its CTEs inserted, which the
   * statement's snapshot does not see (so no row is read twice). `columns`: the columns of `t`
   * `rows` has, in that order, when the caller may not select all of them.
   */
  readAlso(t: Table, rows: string, columns: string[] | undefined): void {
    this.extra.set(tableRef(t), { rows, columns, read: false });
  }

  /** Whether readFrom(t) has read the rows given by readAlso. */
  readExtra(t: Table): boolean {
    return this.extra.get(tableRef(t))?.read === true;
  }

  /** The FROM item (without alias) reading table `t`'s rows. */
  readFrom(t: Table): string {
    const ref = tableRef(t);
    const x = this.extra.get(ref);
    if (!x) return ref;
    x.read = true;
    const cols = x.columns ? x.columns.map(quoteIdent).join(', ') : '*';
    return `(select ${cols} from ${ref} union all select ${cols} from ${x.rows})`;
  }

  /** FROM item `alias` of readFrom(t) as a value of `t`'s row type (for computed fields). */
  rowOf(t: Table, alias: string): string {
    return this.extra.has(tableRef(t)) ? `${alias}::${tableRef(t)}` : alias;
  }

  alias(): string {
    return `t${++this.n}`;
  }

  /** A placeholder for `p`, cast to its type (each use binds a parameter of its own). */
  param(p: Param): string {
    this.params.push(p.text);
    this.variables.push(p.variable);
    return `$${this.params.length}::${p.cast}`;
  }
}

export function tableRef(t: Table): string {
  return `${quoteIdent(t.schema)}.${quoteIdent(t.sqlName)}`;
}

/**
 * json_build_object of the pairs (keys in selection order; json is cheaper to build than jsonb).
 * Postgres allows 100 arguments per call: larger objects are built as jsonb chunks and merged
 * pairwise in a balanced tree, so each pair is copied O(log chunks) times, not O(chunks) times
 * as a left-to-right chain of `||` would (20,000 aliases: ~600 ms of PostgreSQL time).
 */
export function jsonObject(pairs: [string, string][]): string {
  if (pairs.length === 0) return `'{}'::json`;
  const args = (chunk: [string, string][]) => chunk.map(([k, v]) => `${quoteLiteral(k)}, ${v}`).join(', ');
  if (pairs.length <= 50) return `json_build_object(${args(pairs)})`;
  let level: string[] = [];
  for (let i = 0; i < pairs.length; i += 50)
    level.push(`jsonb_build_object(${args(pairs.slice(i, i + 50))})`);
  while (level.length > 1) {
    const next: string[] = [];
    for (let i = 0; i < level.length; i += 2)
      next.push(i + 1 < level.length ? `(${level[i]} || ${level[i + 1]})` : (level[i] as string));
    level = next;
  }
  return `${level[0]}::json`;
}

/** Replaces $n placeholders outside quotes by escaped literals (for one-message simple-protocol execution). */
export function inlineParams(sql: string, params: readonly (string | null)[]): string {
  if (!params.length) return sql;
  return mapPlaceholders(sql, (n) => {
    const v = params[n - 1];
    return v === null || v === undefined ? 'NULL' : quoteLiteral(v);
  });
}

/**
 * `sql` with each `$n` placeholder token replaced by `replace(n, end)` (`end`: the index in `sql`
 * just after the token). Only tokens outside quoted literals ('…', E'…') and quoted identifiers
 * ("…") are placeholders; the transpiler writes no comments or dollar-quoted strings.
 */
export function mapPlaceholders(sql: string, replace: (n: number, end: number) => string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i];
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      const escaped = ch === "'" && i > 0 && (sql[i - 1] === 'E' || sql[i - 1] === 'e');
      while (j < sql.length) {
        if (escaped && sql[j] === '\\') j += 2;
        else if (sql[j] === ch) {
          if (sql[j + 1] === ch) j += 2;
          else break;
        } else j++;
      }
      out += sql.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (ch === '$' && /[0-9]/.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (/[0-9]/.test(sql[j] ?? '')) j++;
      out += replace(Number(sql.slice(i + 1, j)), j);
      i = j;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}
