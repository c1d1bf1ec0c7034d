/**
 * What the next refresh of a project's live queries must re-run: everything (polling, the safety
 * refresh, the feed starting or failing, a schema change), the commits reported since the last
 * refresh started, variable sets that never ran or whose last run failed, and the settle passes.
 *
 * Settling: a commit is decoded from the WAL a moment before it is visible to new snapshots
 * (PostgreSQL flushes the commit record, then ends the transaction in the proc array), so a
 * refresh started right after the report may miss it. A refresh first checks that a snapshot sees
 * its commits (live-queries.ts); when it could not tell, the sets it re-ran for commits are re-run
 * once more by the first refresh that starts COMMIT_SETTLE_MS (less SETTLE_SLACK_MS) after it —
 * folded into the refreshes a steady stream of commits makes anyway, or on a timer of its own.
 */
import type { Commit } from './change-feed.js';

/** The settle pass of a refresh's commits starts this long after that refresh. */
export const COMMIT_SETTLE_MS = 250;
/** A refresh may take a settle pass this much earlier than due (fewer refreshes after a burst). */
const SETTLE_SLACK_MS = 100;
/** Row changes held for the next refresh; beyond it commits are kept as their tables only. */
const MAX_PENDING_ROWS = 20_000;
/** Commits held for the next refresh; beyond it they are merged into one. */
const MAX_PENDING_COMMITS = 1_000;

export interface RefreshWork<S> {
  /** Re-run every set. */
  all: boolean;
  commits: Commit[];
  /** Sets to re-run whatever the commits say. */
  sets: Set<S>;
}

export class RefreshQueue<S extends { dead?: boolean }> {
  private all = false;
  private commits: Commit[] = [];
  private rows = 0;
  /** When the last commit now pending was reported. */
  private newest = 0;
  private readonly sets = new Set<S>();
  private settling: { due: number; all: boolean; sets: Set<S> }[] = [];

  everything(): void {
    this.all = true;
  }

  commit(c: Commit): void {
    this.newest = Date.now();
    let kept = c;
    const n = c.changes?.length ?? 0;
    if (c.changes && this.rows + n > MAX_PENDING_ROWS) kept = { lsn: c.lsn, tables: c.tables, xid: c.xid };
    else this.rows += n;
    if (c.anyTable) kept = { ...kept, anyTable: true };
    if (this.commits.length < MAX_PENDING_COMMITS) {
      this.commits.push(kept);
      return;
    }
    const last = this.commits.pop() as Commit;
    // (Without an xid: a refresh cannot check that it sees it, and settles.)
    const merged: Commit = { lsn: kept.lsn, tables: new Set([...last.tables, ...kept.tables]) };
    if (last.anyTable || kept.anyTable) merged.anyTable = true;
    this.commits.push(merged);
  }

  /** A set to run at the next refresh (new, or its last run failed). */
  add(set: S): void {
    this.sets.add(set);
  }

  get idle(): boolean {
    return !this.all && !this.commits.length && !this.sets.size;
  }

  /** The work of a refresh starting at `start`, with the settle passes due by then. */
  take(start: number): RefreshWork<S> & { newest: number } {
    const work = { all: this.all, commits: this.commits, sets: new Set(this.sets), newest: this.newest };
    this.all = false;
    this.commits = [];
    this.rows = 0;
    this.sets.clear();
    const keep: typeof this.settling = [];
    for (const e of this.settling) {
      if (e.due > start + SETTLE_SLACK_MS) keep.push(e);
      else if (e.all) work.all = true;
      else for (const s of e.sets) if (!s.dead) work.sets.add(s);
    }
    this.settling = keep;
    return work;
  }

  /**
   * A refresh started at `start` re-ran `sets` (all: every set) for commits, the newest reported
   * at `newest`: once more at the settle pass, unless a snapshot taken before its statements was
   * seen to hold every one of them (`seen`), or it started long enough after them.
   */
  settle(start: number, newest: number, seen: boolean, all: boolean, sets: Iterable<S>): void {
    if (seen || start - newest >= COMMIT_SETTLE_MS) return;
    const entry = { due: start + COMMIT_SETTLE_MS, all, sets: new Set(all ? [] : sets) };
    if (all || entry.sets.size) this.settling.push(entry);
  }

  /** Milliseconds until the next settle pass is due (undefined: none waiting). */
  nextSettle(now: number): number | undefined {
    if (!this.settling.length) return undefined;
    const due = Math.min(...this.settling.map((e) => e.due));
    return Math.max(0, due - SETTLE_SLACK_MS - now);
  }

  clear(): void {
    this.all = false;
    this.commits = [];
    this.rows = 0;
    this.sets.clear();
    this.settling = [];
  }
}
