/**
 * Many parameter sets of one SQL text as one statement (resolveBatchWithPoolText, run-batch.ts).
 *
 * The transpiler writes every value as a placeholder with its cast (`$n::"schema"."type"`, see
 * transpile/sql-text.ts SqlBuilder.param), so statements of the same text differ only in their
 * parameters. Their sets are sent as one array per placeholder and joined laterally:
 *
 *   select __strata_batch.i, __strata_result.v
 *   from rows from (unnest($1::"pg_catalog"."text"[]), unnest($2::"pg_catalog"."int4"[])) with ordinality
 *     as __strata_batch(p1, p2, i)
 *   left join lateral (<the statement, $k written __strata_batch.pk>) as __strata_result(v) on true
 *
 * Each array has the placeholder's own type, so PostgreSQL reads every value with that type's input
 * function, exactly as it reads the statement's parameter alone (a placeholder of an array type is
 * sent as text[] and cast as the statement casts it: PostgreSQL's array input either way). The
 * statement's text does not depend on the values or on their number, so it is prepared like any
 * other (prepared.ts). A set's row is matched to it by its ordinality; `left join` keeps a set
 * whose statement returns no row (its JSON is then null, as alone).
 */
import type pg from 'pg';
import { toArrayLiteral } from '../plan/values.js';
import { mapPlaceholders } from '../transpile/sql-text.js';
import { jsonTextOf, jsonTextOfColumn } from './json-text.js';

/** Most parameter sets joined in one statement (a larger group takes several). */
export const BATCH_MAX = 500;

export interface Statement {
  sql: string;
  params: readonly (string | null)[];
}

/** The statements to run for some items, and how their results become the items' JSON texts. */
export interface BatchedStatements {
  statements: Statement[];
  /** Whether a statement joins several parameter sets (the lateral form). */
  lateral: boolean;
  /** The items' JSON texts (in the items' order), from the statements' results (in their order). */
  texts(results: readonly pg.QueryResult[]): string[];
}

/** A cast after a placeholder: `::` then a (qualified, maybe quoted) type name, maybe `[]`. */
const IDENT = '(?:"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*)';
const CAST = new RegExp(`::(${IDENT}(?:\\.${IDENT})*(?:\\[\\])*)`, 'y');

/**
 * The lateral statement for `sql`'s parameter sets, or undefined when `sql`'s placeholders are not
 * each `$1`..`$count` once with a cast (then each set runs as its own statement).
 */
export function lateralSql(sql: string, count: number): string | undefined {
  const casts: (string | undefined)[] = new Array(count).fill(undefined);
  let fit = count > 0;
  const body = mapPlaceholders(sql, (n, end) => {
    CAST.lastIndex = end;
    const cast = CAST.exec(sql)?.[1];
    if (!cast || n < 1 || n > count || casts[n - 1] !== undefined) fit = false;
    else casts[n - 1] = cast;
    return `__strata_batch.p${n}`;
  });
  if (!fit || casts.some((c) => c === undefined)) return undefined;
  const arrays = casts.map((c, k) => `unnest($${k + 1}::${c?.endsWith('[]') ? '"pg_catalog"."text"' : c}[])`);
  const columns = casts.map((_, k) => `p${k + 1}`);
  return (
    'select __strata_batch.i, __strata_result.v' +
    ` from rows from (${arrays.join(', ')}) with ordinality as __strata_batch(${columns.join(', ')}, i)` +
    ` left join lateral (${body}) as __strata_result(v) on true`
  );
}

interface ParamSet {
  params: readonly (string | null)[];
  /** The items that have this text and these parameters. */
  items: number[];
}

type Reader = (res: pg.QueryResult, texts: string[]) => void;

/** One statement for `sets` of `sql`: the statement itself for one set, else the lateral form. */
function statementFor(sql: string, sets: ParamSet[], lateral: string): [Statement, Reader] {
  const count = sets[0]?.params.length ?? 0;
  const params = Array.from({ length: count }, (_, k) =>
    toArrayLiteral(sets.map((s) => s.params[k] ?? null)),
  );
  const read: Reader = (res, texts) => {
    const seen = new Set<number>();
    for (const row of res.rows as Record<string, unknown>[]) {
      const k = Number(row.i) - 1;
      const set = sets[k];
      // Several rows for one set (a statement returning more than one): the first, as alone.
      if (!set || seen.has(k)) continue;
      seen.add(k);
      const text = jsonTextOfColumn(res, row, 1);
      for (const item of set.items) texts[item] = text;
    }
  };
  return [{ sql: lateral, params }, read];
}

/**
 * The statements running `items`: items of the same text and parameters share one statement;
 * items of the same text with other parameters share a lateral statement (at most `max` sets each).
 */
export function batchStatements(items: readonly Statement[], max = BATCH_MAX): BatchedStatements {
  const byText = new Map<string, Map<string, ParamSet>>();
  items.forEach((item, index) => {
    let sets = byText.get(item.sql);
    if (!sets) {
      sets = new Map();
      byText.set(item.sql, sets);
    }
    const key = JSON.stringify(item.params);
    const set = sets.get(key);
    if (set) set.items.push(index);
    else sets.set(key, { params: item.params, items: [index] });
  });
  const statements: Statement[] = [];
  const readers: Reader[] = [];
  let joined = false;
  for (const [sql, bySet] of byText) {
    const sets = [...bySet.values()];
    const count = sets[0]?.params.length ?? 0;
    const lateral =
      sets.length > 1 && sets.every((s) => s.params.length === count) ? lateralSql(sql, count) : undefined;
    for (let at = 0; at < sets.length; at += lateral ? Math.max(1, max) : 1) {
      const chunk = sets.slice(at, lateral ? at + Math.max(1, max) : at + 1);
      const only = chunk.length === 1 ? chunk[0] : undefined;
      if (only || !lateral) {
        const set = only ?? (chunk[0] as ParamSet);
        statements.push({ sql, params: set.params });
        readers.push((res, texts) => {
          const text = jsonTextOf(res);
          for (const item of set.items) texts[item] = text;
        });
        continue;
      }
      const [statement, read] = statementFor(sql, chunk, lateral);
      joined = true;
      statements.push(statement);
      readers.push(read);
    }
  }
  return {
    statements,
    lateral: joined,
    texts(results) {
      const texts: string[] = new Array(items.length).fill('null');
      readers.forEach((read, k) => {
        const res = results[k];
        if (res === undefined) throw new Error('internal error: a statement of the message has no result');
        read(res, texts);
      });
      return texts;
    },
  };
}
