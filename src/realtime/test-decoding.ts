/**
 * test_decoding's change lines → row changes. The format is PostgreSQL's
 * (contrib/test_decoding/test_decoding.c): `table <schema>.<table>: <OP>: <tuple>`, a tuple being
 * ` name[type]:value` per column (names quoted as quote_identifier quotes them; values `null`,
 * `unchanged-toast-datum`, a bare number or boolean, `B'…'` for bit strings, or a literal in
 * single quotes with `''` for a quote). An UPDATE whose old key is logged reads
 * `UPDATE: old-key: <key> new-tuple: <tuple>`; a DELETE logs the old key (replica identity
 * columns, NULLs left out) or `(no-tuple-data)`; TRUNCATE names every table it truncated.
 */

/** A column's value as text (its type's output function), null for SQL NULL. */
export type RowValues = Record<string, string | null>;

export type ChangeOp = 'INSERT' | 'UPDATE' | 'DELETE' | 'TRUNCATE';

export interface RowChange {
  schema: string;
  table: string;
  op: ChangeOp;
  /** INSERT and UPDATE: the new row. Columns whose value is an unchanged TOASTed datum are absent. */
  new?: RowValues;
  /** DELETE, and UPDATE when the key changed (or the replica identity is FULL): the old key columns. */
  old?: RowValues;
  /** Column → type as format_type names it, for the columns of `new`/`old`. */
  types?: Record<string, string>;
}

class Reader {
  i = 0;
  constructor(readonly s: string) {}
  get done(): boolean {
    return this.i >= this.s.length;
  }
  expect(text: string): void {
    if (!this.s.startsWith(text, this.i)) throw new Error(`expected ${JSON.stringify(text)} at ${this.i}`);
    this.i += text.length;
  }
  /** A quote_identifier'd name: `"…"` with `""` inside, or bare up to one of `stops`. */
  ident(stops: string): string {
    if (this.s[this.i] === '"') return this.quoted('"');
    const start = this.i;
    while (this.i < this.s.length && !stops.includes(this.s[this.i] as string)) this.i++;
    return this.s.slice(start, this.i);
  }
  quoted(q: string): string {
    let out = '';
    this.i++;
    for (;;) {
      const end = this.s.indexOf(q, this.i);
      if (end < 0) throw new Error('unterminated quote');
      out += this.s.slice(this.i, end);
      this.i = end + 1;
      if (this.s[this.i] !== q) return out;
      out += q;
      this.i++;
    }
  }
}

const UNCHANGED = Symbol('unchanged-toast-datum');

function value(r: Reader): string | null | typeof UNCHANGED {
  const s = r.s;
  if (s[r.i] === "'") return r.quoted("'");
  if (s.startsWith("B'", r.i)) {
    r.i++;
    return r.quoted("'");
  }
  const end = s.indexOf(' ', r.i);
  const token = s.slice(r.i, end < 0 ? s.length : end);
  r.i += token.length;
  if (token === 'null') return null;
  if (token === 'unchanged-toast-datum') return UNCHANGED;
  return token;
}

/** Columns until the end of the line or ` new-tuple:`. */
function tuple(r: Reader, types: Record<string, string>): RowValues {
  const row: RowValues = {};
  while (!r.done && !r.s.startsWith(' new-tuple:', r.i)) {
    r.expect(' ');
    const name = r.ident('[');
    r.expect('[');
    const close = r.s.indexOf(']:', r.i);
    if (close < 0) throw new Error('column type not closed');
    types[name] = r.s.slice(r.i, close);
    r.i = close + 2;
    const v = value(r);
    if (v !== UNCHANGED) row[name] = v;
  }
  return row;
}

/** A `table …` line's changes (TRUNCATE: one per table); null for a line that is not a change. */
export function parseChangeLine(line: string): RowChange[] | null {
  if (!line.startsWith('table ')) return null;
  const r = new Reader(line);
  r.i = 'table '.length;
  const tables: { schema: string; table: string }[] = [];
  for (;;) {
    const schema = r.ident('.');
    r.expect('.');
    const table = r.ident(':,');
    tables.push({ schema, table });
    if (line[r.i] !== ',') break;
    r.expect(', ');
  }
  r.expect(': ');
  const colon = line.indexOf(':', r.i);
  const op = line.slice(r.i, colon) as ChangeOp;
  r.i = colon + 1;
  if (op === 'TRUNCATE') return tables.map((t) => ({ ...t, op }));
  const [t] = tables;
  if (!t || (op !== 'INSERT' && op !== 'UPDATE' && op !== 'DELETE')) return null;
  const change: RowChange = { ...t, op };
  if (line.startsWith(' (no-tuple-data)', r.i)) return [change];
  const types: Record<string, string> = {};
  change.types = types;
  if (op === 'DELETE') change.old = tuple(r, types);
  else if (op === 'UPDATE' && line.startsWith(' old-key:', r.i)) {
    r.i += ' old-key:'.length;
    change.old = tuple(r, types);
    r.expect(' new-tuple:');
    change.new = tuple(r, types);
  } else change.new = tuple(r, types);
  return [change];
}
