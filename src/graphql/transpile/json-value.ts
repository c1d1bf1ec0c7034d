/** SQL expressions that turn column values, node ids and cursors into the response's JSON. */
import type { SqlType, Table } from '../introspect/model.js';
import { pkColumns } from '../introspect/rules.js';
import { quoteIdent, quoteLiteral } from './sql-text.js';

const AS_TEXT = new Set(['int8', 'numeric', 'json', 'jsonb']);

/** A value expression whose to_json() is the field's JSON (used inside json_build_object). */
export function jsonOf(expr: string, t: SqlType): string {
  if (t.enumRef && !t.isArray && t.enumRef.values.some((v) => v.name !== v.label)) {
    const cases = t.enumRef.values
      .map((v) => `when ${quoteLiteral(v.label)} then ${quoteLiteral(v.name)}`)
      .join(' ');
    return `(case (${expr})::text ${cases} end)`;
  }
  if (AS_TEXT.has(t.baseName) && !t.opaqueDomain) return t.isArray ? `(${expr})::text[]` : `(${expr})::text`;
  return expr;
}

export function col(row: string, name: string): string {
  // A plain alias is referenced directly (column privileges); other row expressions need parentheses.
  return /^[a-z0-9_]+$/.test(row) ? `${row}.${quoteIdent(name)}` : `(${row}).${quoteIdent(name)}`;
}

export function base64Json(arrayExpr: string): string {
  return `translate(encode(convert_to((${arrayExpr})::text, 'utf-8'), 'base64'), E'\\n', '')`;
}

export function nodeIdOf(t: Table, row: string): string {
  const parts = [
    `${quoteLiteral(t.schema)}::text`,
    `${quoteLiteral(t.sqlName)}::text`,
    ...pkColumns(t).map((c) => col(row, c.sqlName)),
  ];
  return base64Json(`jsonb_build_array(${parts.join(', ')})`);
}
