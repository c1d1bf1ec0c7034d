/**
 * Visibility probes' answers kept across refreshes (visibility-probe.ts), for the tables whose
 * rows' visibility is a function of their policy columns' values, the claims and the tables their
 * policies read (ProbeTarget.steady): whether a row of those values is visible to a probe's
 * principal holds until one of those tables changes. A chat's messages, visible by their room's
 * org, are then probed once per (org, room) instead of once per org at every refresh.
 *
 * Dropped, per table, when a commit is reported that changes a table its policies read, that
 * deletes or truncates rows of it, or that updates a policy column of one (or whose rows are not
 * known); all of them past MAX_KEPT answers or MAX_KEPT_CHARS of keys (a key holds claims, which a
 * user may make long through their metadata). A table is watched from its first probe on, and an answer
 * asked before any drop since is not kept (`generation`): it may predate the change.
 * Keys hold the schema version, the role and the claims the table's visibility depends on.
 *
 * A probe sees the rows as its snapshot has them: a row deleted, or moved by an update of a policy
 * column, after the commit that is probed reads as invisible, and that answer may be kept under
 * the values the commit logged. The later change is already committed, so it is reported soon
 * after; it drops the answers and re-runs the groups itself (a DELETE or such an UPDATE is never
 * probed). Until then a group may miss a row of those values; nothing is shown that the
 * principal's own statements would not show, as every result still comes from one.
 */
import { tableKey, type Commit } from './change-feed.js';

/** Most answers kept (per live-query service, i.e. per project database): past it all are dropped. */
export const MAX_KEPT = 50_000;
/** Most characters of keys kept (per live-query service): past it all are dropped. */
export const MAX_KEPT_CHARS = 8 * 1024 * 1024;

interface TableAnswers {
  /** Tables whose changes drop these answers (the ones the policies read). */
  dependsOn: Set<string>;
  /** The policy columns: an UPDATE of one of them drops these answers. */
  columns: string[];
  answers: Map<string, boolean>;
}

/** What a row of `columns` logged, as part of a key; undefined when a value is not known. */
export function valuesKey(
  row: Record<string, string | null | undefined>,
  columns: readonly string[],
): string | undefined {
  const values: (string | null)[] = [];
  for (const c of columns) {
    const v = row[c];
    if (v === undefined) return undefined;
    values.push(v);
  }
  return JSON.stringify(values);
}

export class ProbeAnswers {
  private tables = new Map<string, TableAnswers>();
  private size = 0;
  private chars = 0;
  /** Bumped by every drop: an answer asked at an earlier generation is not kept. */
  generation = 0;

  get(table: string, key: string): boolean | undefined {
    return this.tables.get(table)?.answers.get(key);
  }

  /**
   * Watches a table whose rows are about to be probed (before its probe is asked): a commit that
   * would drop its answers now also stops the probe's own from being kept. Answers the generation
   * to ask at.
   */
  watch(table: string, target: { columns: string[]; dependsOn: Set<string> }): number {
    if (!this.tables.has(table))
      this.tables.set(table, { dependsOn: target.dependsOn, columns: target.columns, answers: new Map() });
    return this.generation;
  }

  /** Keeps one answer, unless answers were dropped since it was asked (`askedAt`). */
  keep(
    table: string,
    target: { columns: string[]; dependsOn: Set<string> },
    key: string,
    visible: boolean,
    askedAt: number,
  ): void {
    if (askedAt !== this.generation) return;
    if (this.size >= MAX_KEPT || this.chars + key.length > MAX_KEPT_CHARS) this.clear();
    this.watch(table, target);
    const t = this.tables.get(table) as TableAnswers;
    if (!t.answers.has(key)) {
      this.size++;
      this.chars += key.length;
    }
    t.answers.set(key, visible);
  }

  /** A commit was reported: drops the answers it may have made wrong. */
  forget(commit: Commit): void {
    if (!this.tables.size) return;
    if (commit.anyTable) {
      this.clear();
      return;
    }
    const changed = new Set(commit.tables);
    for (const ch of commit.changes ?? []) changed.add(tableKey(ch.schema, ch.table));
    for (const [table, t] of this.tables) if ([...changed].some((c) => t.dependsOn.has(c))) this.drop(table);
    if (!commit.changes) {
      for (const table of changed) this.drop(table);
      return;
    }
    for (const ch of commit.changes) {
      const table = tableKey(ch.schema, ch.table);
      const t = this.tables.get(table);
      if (!t || ch.op === 'INSERT') continue;
      const kept =
        ch.op === 'UPDATE' &&
        ch.old !== undefined &&
        ch.new !== undefined &&
        t.columns.every((c) => ch.old?.[c] !== undefined && ch.old?.[c] === ch.new?.[c]);
      if (!kept) this.drop(table);
    }
  }

  private drop(table: string): void {
    const t = this.tables.get(table);
    if (!t) return;
    this.size -= t.answers.size;
    for (const k of t.answers.keys()) this.chars -= k.length;
    this.tables.delete(table);
    this.generation++;
  }

  /** Drops every answer (the schema changed: the keys hold the old version). */
  clear(): void {
    this.tables.clear();
    this.size = 0;
    this.chars = 0;
    this.generation++;
  }
}
