/** A compiled statement's answer: the single column of its first row. */
import type pg from 'pg';

/** The value in `res`'s first row and column; null when the statement returned no row. */
export function firstValue(res: pg.QueryResult | undefined): unknown {
  if (res === undefined) throw new Error('internal error: a statement of the message has no result');
  const row = res.rows[0];
  if (!row) return null;
  const field = res.fields[0];
  if (field === undefined) throw new Error('internal error: a statement returned a row without a column');
  return row[field.name] ?? null;
}
