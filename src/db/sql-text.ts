/** Quoting for identifiers and literals, for the places where a value cannot be a bound parameter. */

export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/**
 * PostgreSQL's own error for a NUL character in a text value (SQLSTATE 22021), raised here when a
 * value is written into SQL text rather than sent as a parameter, so callers see the same error
 * either way.
 */
export class NulInTextError extends Error {
  readonly code = '22021';
  constructor() {
    super('invalid byte sequence for encoding "UTF8": 0x00');
    this.name = 'NulInTextError';
  }
}

/** Throws NulInTextError when `value` holds a NUL character (PostgreSQL text cannot). */
export function assertNoNul(value: string): void {
  if (value.includes('\u0000')) throw new NulInTextError();
}

/** A string literal that is correct whatever standard_conforming_strings says (E'' when needed). */
export function quoteLiteral(value: string): string {
  assertNoNul(value);
  let hasBackslash = false;
  let out = "'";
  for (const ch of value) {
    if (ch === "'") out += "''";
    else if (ch === '\\') {
      out += '\\\\';
      hasBackslash = true;
    } else out += ch;
  }
  out += "'";
  return hasBackslash ? ' E' + out : out;
}

/** Replaces $1..$n in `sql` by literals (text cast to the placeholder's context), for one-message execution. */
export function inlineParams(sql: string, params: readonly unknown[]): string {
  if (params.length === 0) return sql;
  return sql.replace(/\$(\d+)/g, (whole, n: string) => {
    const v = params[Number(n) - 1];
    if (Number(n) < 1 || Number(n) > params.length) return whole;
    return literalOf(v);
  });
}

export function literalOf(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' || typeof v === 'bigint') return quoteLiteral(String(v));
  if (typeof v === 'boolean') return v ? "'true'" : "'false'";
  if (v instanceof Date) return quoteLiteral(v.toISOString());
  if (Array.isArray(v) || typeof v === 'object') return quoteLiteral(JSON.stringify(v));
  return quoteLiteral(String(v));
}
