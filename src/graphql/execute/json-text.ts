/**
 * A statement's JSON kept as PostgreSQL's text: no JSON.parse in the driver, and for the HTTP
 * body no JSON.stringify either. The text goes out as PostgreSQL wrote it (jsonb's `": "` and
 * `", "` spacing and its numerals), as pg_graphql's own answers do through PostgREST.
 */
import pg from 'pg';
import type { CustomTypesConfig } from 'pg';

const JSON_OID = 114;
const JSONB_OID = 3802;
const identity = (value: string): string => value;

/** A query's `types`: json and jsonb stay text, every other type is parsed as usual. */
export const JSON_AS_TEXT: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === JSON_OID || oid === JSONB_OID
      ? identity
      : pg.types.getTypeParser(oid, format ?? 'text')) as CustomTypesConfig['getTypeParser'],
};

/** The JSON text of a statement's value (first row, first column); 'null' when there is no row. */
export function jsonTextOf(res: pg.QueryResult | undefined): string {
  if (res === undefined) throw new Error('internal error: a statement of the message has no result');
  const row = res.rows[0];
  return row ? jsonTextOfColumn(res, row, 0) : 'null';
}

/** The JSON text of column `column` of `row`, a row of `res` (json and jsonb as PostgreSQL wrote them). */
export function jsonTextOfColumn(res: pg.QueryResult, row: Record<string, unknown>, column: number): string {
  const field = res.fields[column];
  if (field === undefined) throw new Error('internal error: a statement returned a row without a column');
  const value = row[field.name];
  if (value === null || value === undefined) return 'null';
  if (field.dataTypeID === JSON_OID || field.dataTypeID === JSONB_OID) return value as string;
  return JSON.stringify(value);
}

/** The value a statement's JSON text stands for (what the driver would have parsed). */
export function parseJsonText(text: string): unknown {
  return JSON.parse(text);
}
