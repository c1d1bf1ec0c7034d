/**
 * A statement's JSON kept as PostgreSQL's text: no JSON.parse in the driver, and for the HTTP
 * body no JSON.stringify either. The text is compacted to exactly what
 * `JSON.stringify(JSON.parse(text))` gives (whitespace outside strings dropped, numbers JavaScript
 * would print differently reprinted), so responses stay byte for byte what they were.
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

/**
 * The JSON text of a statement's value (first row, first column); 'null' when there is no row.
 * `compact`: as JSON.stringify would write the value (compactJson), else as PostgreSQL did.
 */
export function jsonTextOf(res: pg.QueryResult | undefined, compact: boolean): string {
  if (res === undefined) throw new Error('internal error: a statement of the message has no result');
  const row = res.rows[0];
  if (!row) return 'null';
  const field = res.fields[0];
  if (field === undefined) throw new Error('internal error: a statement returned a row without a column');
  const value = row[field.name];
  if (value === null || value === undefined) return 'null';
  if (field.dataTypeID === JSON_OID || field.dataTypeID === JSONB_OID)
    return compact ? compactJson(value as string) : (value as string);
  return JSON.stringify(value);
}

/** The value a statement's JSON text stands for (what the driver would have parsed). */
export function parseJsonText(text: string): unknown {
  return JSON.parse(text);
}

const QUOTE = 34;
const BACKSLASH = 92;
const MINUS = 45;

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** A number token as JSON.stringify prints the number JSON.parse reads from it. */
function numberText(token: string): string {
  return JSON.stringify(Number(token));
}

/**
 * `JSON.stringify(JSON.parse(text))` for the JSON text PostgreSQL writes, without building the
 * value: one pass that copies strings as they are (PostgreSQL escapes them as JSON.stringify
 * does), drops whitespace outside them and reprints the numbers JavaScript would print differently
 * (exponents, fractions, -0, integers past 15 digits).
 */
export function compactJson(text: string): string {
  let out = '';
  let from = 0; // start of the text not copied to `out` yet
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // The closing quote: the next one not escaped by an odd number of backslashes.
      let close = i;
      for (;;) {
        close = text.indexOf('"', close + 1);
        if (close < 0) throw new Error('internal error: unterminated string in a statement result');
        let b = close - 1;
        while (text.charCodeAt(b) === BACKSLASH) b--;
        if ((close - 1 - b) % 2 === 0) break;
      }
      i = close + 1;
    } else if (isSpace(c)) {
      if (i > from) out += text.slice(from, i);
      i++;
      while (i < n && isSpace(text.charCodeAt(i))) i++;
      from = i;
    } else if (c === MINUS || isDigit(c)) {
      const start = i;
      let plain = true;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (isDigit(d)) i++;
        else if (d === 46 || d === 101 || d === 69 || d === 43 || d === MINUS) {
          plain = false;
          i++;
        } else break;
      }
      // Integers JavaScript holds exactly print as they are; any other number is reprinted.
      const first = c === MINUS ? text.charCodeAt(start + 1) : c;
      if (!plain || i - start > 15 || (first === 48 && i - start > 1)) {
        const token = text.slice(start, i);
        const printed = numberText(token);
        if (printed !== token) {
          out += text.slice(from, start) + printed;
          from = i;
        }
      }
    } else i++;
  }
  return from === 0 ? text : out + text.slice(from);
}
