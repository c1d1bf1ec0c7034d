/** The row of a query that always returns one (a select without FROM, count(*), a config query). */
import type pg from 'pg';

/**
 * The first row of `result`; `what` names the query in the internal error thrown when there is no
 * result or no row (a broken invariant, never bad input).
 */
export function firstRow<R extends pg.QueryResultRow>(
  result: pg.QueryResult<R> | undefined,
  what: string,
): R {
  const row = result?.rows[0];
  if (row === undefined) throw new Error(`internal error: ${what} returned no row`);
  return row;
}
