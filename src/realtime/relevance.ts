/**
 * Which variable sets of a group a commit can affect (read-set.ts gives each set's scope):
 * - a set whose scope is `any`: every commit;
 * - else a commit that changed none of its tables: none; without row changes (too many rows, a
 *   line not read) or `anyTable`: every set reading a changed table;
 * - a change to the table of a set's insert filter: only when one of its row images (rowsOf: an
 *   INSERT's new row, an UPDATE's new and old rows, a DELETE's old row) meets every constraint
 *   (its column's value is one of the values, compared exactly for the column's type; a column not
 *   logged meets any). An UPDATE whose old row is not logged (the default replica identity, key
 *   unchanged) and a TRUNCATE: every set reading the table — a row may have left the result.
 * Anything that cannot be told is relevant: a missed refresh is a wrong result, an extra one only
 * costs a statement.
 */
import { tableKey, type Commit } from './change-feed.js';
import type { SetScope } from './read-set.js';
import type { RowChange, RowValues } from './test-decoding.js';

export type ExactKind = 'bool' | 'int' | 'text' | 'uuid';

const TRUE = new Set(['t', 'tr', 'tru', 'true', 'y', 'ye', 'yes', 'on', '1']);
const FALSE = new Set(['f', 'fa', 'fal', 'fals', 'false', 'n', 'no', 'of', 'off', '0']);

/**
 * A value's text as its type compares it (PostgreSQL's input rules: integers with surrounding
 * blanks and a sign, booleans by their accepted spellings, uuids in any case, with or without
 * hyphens and braces); undefined when it is not read here.
 */
export function normalizeValue(kind: ExactKind, text: string): string | undefined {
  switch (kind) {
    case 'text':
      return text;
    case 'int': {
      const m = /^[ \t\n\r\f\v]*([+-]?\d{1,30})[ \t\n\r\f\v]*$/.exec(text);
      return m ? BigInt(m[1] as string).toString() : undefined;
    }
    case 'uuid': {
      const bare = /^\{.*\}$/s.test(text) ? text.slice(1, -1) : text;
      const hex = bare.replace(/-/g, '');
      return /^[0-9A-Fa-f]{32}$/.test(hex) ? hex.toLowerCase() : undefined;
    }
    case 'bool': {
      const t = text.trim().toLowerCase();
      return TRUE.has(t) ? 'true' : FALSE.has(t) ? 'false' : undefined;
    }
  }
}

/**
 * The elements of an array literal as the engine writes them (values.ts toArrayLiteral: every
 * element double-quoted with `\` escapes, or NULL); undefined for anything else.
 */
export function parseArrayLiteral(text: string): (string | null)[] | undefined {
  if (!text.startsWith('{') || !text.endsWith('}')) return undefined;
  const out: (string | null)[] = [];
  let i = 1;
  if (text.length === 2) return out;
  for (;;) {
    if (text.startsWith('NULL', i)) {
      out.push(null);
      i += 4;
    } else if (text[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        const ch = text[i];
        if (ch === undefined) return undefined;
        if (ch === '"') break;
        if (ch === '\\') {
          i++;
          if (text[i] === undefined) return undefined;
        }
        value += text[i];
        i++;
      }
      i++;
      out.push(value);
    } else return undefined;
    if (text[i] === '}' && i === text.length - 1) return out;
    if (text[i] !== ',') return undefined;
    i++;
  }
}

interface Filtered<S> {
  kind: ExactKind;
  /** Every set indexed under this column, and per normalized value the sets that accept it. */
  sets: S[];
  byValue: Map<string, S[]>;
}

interface TableEntry<S> {
  /** Sets reading the table without an insert filter on it. */
  plain: S[];
  /** Sets with an insert filter on the table, by the column of their first constraint. */
  filtered: Map<string, Filtered<S>>;
}

/** Whether a new row can be in the result of a set with these constraints. */
export function meets(scope: SetScope, row: RowValues): boolean {
  for (const c of scope.insertFilter?.constraints ?? []) {
    const raw = row[c.column];
    if (raw === undefined) continue;
    if (raw === null) return false;
    const v = normalizeValue(c.kind, raw);
    if (v !== undefined && !c.values.has(v)) return false;
  }
  return true;
}

/**
 * The row images a change can move in or out of a filtered result: an INSERT's new row; an
 * UPDATE's new and old rows when its old row was logged (REPLICA IDENTITY FULL, or the key
 * changed: then only key columns, the others unknown); a DELETE's old row (key columns only unless
 * REPLICA IDENTITY FULL). Undefined when not known (an UPDATE without its old row, a TRUNCATE).
 */
export function rowsOf(ch: RowChange): RowValues[] | undefined {
  if (ch.op === 'INSERT') return ch.new ? [ch.new] : undefined;
  if (ch.op === 'UPDATE') return ch.new && ch.old ? [ch.new, ch.old] : undefined;
  if (ch.op === 'DELETE') return ch.old ? [ch.old] : undefined;
  return undefined;
}

/** The sets of one group, indexed by what may change their results. */
export class GroupIndex<S extends { scope: SetScope }> {
  private readonly any: S[] = [];
  private readonly byTable = new Map<string, TableEntry<S>>();

  constructor(sets: Iterable<S>) {
    for (const s of sets) {
      if (s.scope.any) {
        this.any.push(s);
        continue;
      }
      const f = s.scope.insertFilter;
      for (const t of s.scope.tables) {
        let e = this.byTable.get(t);
        if (!e) {
          e = { plain: [], filtered: new Map() };
          this.byTable.set(t, e);
        }
        const first = f?.table === t ? f.constraints[0] : undefined;
        if (!first) {
          e.plain.push(s);
          continue;
        }
        let x = e.filtered.get(first.column);
        if (!x) {
          x = { kind: first.kind, sets: [], byValue: new Map() };
          e.filtered.set(first.column, x);
        }
        x.sets.push(s);
        for (const v of first.values) {
          const list = x.byValue.get(v);
          if (list) list.push(s);
          else x.byValue.set(v, [s]);
        }
      }
    }
  }

  /** Adds to `out` every set `commit` may have changed the result of. */
  affected(commit: Commit, out: Set<S>): void {
    if (commit.anyTable) {
      for (const e of this.byTable.values()) this.addEntry(e, out);
      for (const s of this.any) out.add(s);
      return;
    }
    if (!commit.tables.size) return;
    for (const s of this.any) out.add(s);
    for (const t of commit.tables) {
      const e = this.byTable.get(t);
      if (!e) continue;
      for (const s of e.plain) out.add(s);
      if (!commit.changes) for (const x of e.filtered.values()) for (const s of x.sets) out.add(s);
    }
    if (!commit.changes) return;
    for (const ch of commit.changes) {
      const e = this.byTable.get(tableKey(ch.schema, ch.table));
      if (!e?.filtered.size) continue;
      const rows = rowsOf(ch);
      for (const [column, x] of e.filtered) {
        if (!rows) {
          for (const s of x.sets) out.add(s);
          continue;
        }
        for (const row of rows) {
          const raw = row[column];
          // A NULL matches no equality; a value not read here, or not logged, may match anything.
          if (raw === null) continue;
          const v = raw === undefined ? undefined : normalizeValue(x.kind, raw);
          const candidates = v === undefined ? x.sets : (x.byValue.get(v) ?? []);
          for (const s of candidates) if (meets(s.scope, row)) out.add(s);
        }
      }
    }
  }

  private addEntry(e: TableEntry<S>, out: Set<S>): void {
    for (const s of e.plain) out.add(s);
    for (const x of e.filtered.values()) for (const s of x.sets) out.add(s);
  }
}
