/**
 * The live queries of one project database, multiplexed (live-groups.ts): subscribers whose
 * document, operation, role and the claims their policies read are equal share a group; its
 * variable sets (differing variables) are refreshed together in one call (the engine's resolveBatchWithPoolText). A
 * refresh re-runs only what may have changed (relevance.ts: the tables each set reads, per
 * read-set.ts, and the values an INSERT carries) and pushes a result to a subscriber only when its
 * hash changed for them. Refreshes come from the change feed (change-feed.ts: after each commit
 * that changed rows, plus a safety refresh of everything every SAFETY_REFRESH_MS) while it runs,
 * else every `intervalMs` (polling: everything).
 */
import type pg from 'pg';
import type { Principal } from '../db/with-role.js';
import type { Commit } from './change-feed.js';
import type { DatabaseFeed, FeedListener } from './database-feed.js';
import { groupKeyOf, type Group, type Member, type VarSet } from './live-groups.js';
import type { LiveRequest } from './live-request.js';
import { opaqueScope, type AppendShape, type SetScope } from './read-set.js';
import { RefreshQueue } from './refresh-queue.js';
import { GroupIndex } from './relevance.js';
import { changedKeys, keyValues, mergeable, rowsDocument, type RowsDocument } from './newest-rows.js';
import { publish, runGroups, type GroupRun } from './run-groups.js';
import { ProbeAnswers } from './probe-answers.js';
import { applyProbes, askProbes, keepAnswers, planProbes, type ProbePlan } from './visibility-probe.js';
import { Scopes } from './scopes.js';
import { checkedOf, checkNow, checkStatement, type Checked } from './snapshot-check.js';
import { Subscriber } from './subscriber.js';

export { COMMIT_SETTLE_MS } from './refresh-queue.js';

export interface LiveQueryStats {
  /** Groups: distinct (document, operation, role, claims read). */
  groups: number;
  /** Variable sets: distinct variables within the groups. */
  variableSets: number;
  subscribers: number;
  /** Statements run since start. */
  executions: number;
  /** Variable sets run since start (results computed). */
  refreshedSets: number;
  /**
   * Variable sets a refresh for commits left alone (their tables or values were not touched, or
   * the rows inserted are not visible to them).
   */
  skipped: number;
  /**
   * Variable sets refreshed by running their query for the changed rows only and merging them
   * into the last result (newest-rows.ts); counted in refreshedSets too.
   */
  merged: number;
  /** Visibility probes asked (visibility-probe.ts). */
  probes: number;
  /**
   * Refreshes that could not narrow what they ran: everything ran (the safety refresh, a schema
   * change), or a snapshot was not yet seen to hold their commits (no probes applied; the sets
   * they re-ran run once more at a settle pass, refresh-queue.ts).
   */
  broad: number;
  /** Databases whose live queries are refreshed by logical replication rather than polled. */
  feeds: number;
}

/** Default least time between the starts of two refreshes that commits asked for (STRATA_REALTIME_GAP_MS). */
export const MIN_REFRESH_GAP_MS = 50;

/** With a change feed, refreshes that no commit asked for (time-dependent results: now() in a policy). */
export const SAFETY_REFRESH_MS = 60_000;

export class TooManySubscriptions extends Error {}

/** Adds a variable set to a refresh's runs, under its group. */
function addRun(runs: Map<Group, Set<VarSet>>, s: VarSet): void {
  const sets = runs.get(s.group);
  if (sets) sets.add(s);
  else runs.set(s.group, new Set([s]));
}

export const PROJECT_CHANGED_MESSAGE =
  "The project's database connection was closed (the project was deleted or moved, or its JWT secret changed): subscribe again";

export class LiveQueries {
  private groups = new Map<string, Group>();
  private subscriberCount = 0;
  private counts = { executions: 0, refreshedSets: 0, merged: 0, skipped: 0, probes: 0, broad: 0 };
  /** Probe answers of steady tables, kept across refreshes (probe-answers.ts). */
  private readonly answers = new ProbeAnswers();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private again = false;
  private retired = false;
  private closed = false;
  /** When the last refresh started, and the refresh a commit asked for within the gap after it. */
  private lastRefresh = 0;
  private delayed: NodeJS.Timeout | undefined;
  private settleTimer: NodeJS.Timeout | undefined;
  private readonly queue = new RefreshQueue<VarSet>();
  private readonly scopes: Scopes;
  /** The schema version moved on: the groups are rebuilt before the next refresh. */
  private stale = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: {
      intervalMs: number;
      /** Least time between the starts of two refreshes commits asked for (latency vs. statements per change). */
      gapMs?: number;
      maxSubscribers: number;
      concurrency: number;
      /** The change feed of this database (followed while there are groups); none: poll. */
      feed?: DatabaseFeed;
      /** The pool was closed and every subscription ended: the owner forgets this instance. */
      onRetired?: () => void;
      /** After each refresh's results went out (the process's HeapPacer). */
      afterRefresh?: () => void;
    },
  ) {
    this.scopes = new Scopes(pool, () => {
      this.stale = true;
    });
  }

  stats(): LiveQueryStats {
    let variableSets = 0;
    for (const g of this.groups.values()) variableSets += g.sets.size;
    return {
      groups: this.groups.size,
      variableSets,
      subscribers: this.subscriberCount,
      ...this.counts,
      feeds: this.opts.feed?.on ? 1 : 0,
    };
  }

  /**
   * A new subscriber's stream: its variable set's last result at once when it has one, else after
   * its first run. Its scope (which claims key its group, what re-runs it) is found first.
   */
  async subscribe(request: LiveRequest, principal: Principal): Promise<Subscriber> {
    if (this.subscriberCount >= this.opts.maxSubscribers)
      throw new TooManySubscriptions(
        `Too many subscriptions on this project (the limit is ${this.opts.maxSubscribers})`,
      );
    this.subscriberCount++;
    const scope = await this.scopes.scopeOf(principal, request).catch(() => opaqueScope());
    if (this.retired || this.closed) {
      this.subscriberCount--;
      const ended = new Subscriber(() => {});
      if (this.retired) ended.fail(new Error(PROJECT_CHANGED_MESSAGE));
      else void ended.return();
      return ended;
    }
    const member = { principal, request } as Member;
    member.stream = new Subscriber(() => this.leave(member));
    this.place(member, scope);
    this.startTimer();
    this.opts.feed?.add(this.listener);
    return member.stream;
  }

  /** Puts a member in the group and variable set its scope says (a new set runs at the next refresh). */
  private place(member: Member, scope: SetScope): void {
    const key = groupKeyOf(member.request, member.principal, scope);
    let g = this.groups.get(key);
    if (!g) {
      g = {
        key,
        query: member.request.query,
        operationName: member.request.operationName,
        principal: member.principal,
        narrow: scope.claims !== 'all',
        version: scope.version,
        sets: new Map(),
      };
      this.groups.set(key, g);
    }
    const vkey = JSON.stringify(member.request.variables ?? null);
    let set = g.sets.get(vkey);
    if (!set) {
      set = { key: vkey, group: g, variables: member.request.variables, scope, members: new Set() };
      g.sets.set(vkey, set);
      g.index = undefined;
      this.queue.add(set);
      this.request();
    }
    set.members.add(member);
    member.set = set;
    if (set.last) member.stream.push(set.last.result, set.last.hash);
  }

  private leave(member: Member): void {
    const set = member.set;
    if (!set.members.delete(member)) return;
    this.subscriberCount--;
    if (set.members.size) return;
    set.dead = true;
    const g = set.group;
    if (g.sets.get(set.key) === set) {
      g.sets.delete(set.key);
      g.index = undefined;
    }
    if (!g.sets.size && this.groups.get(g.key) === g) this.groups.delete(g.key);
    if (!this.groups.size) this.stopTimer();
  }

  private members(): Member[] {
    const out: Member[] = [];
    for (const g of this.groups.values()) for (const s of g.sets.values()) out.push(...s.members);
    return out;
  }

  /** Ends every subscription with PROJECT_CHANGED_MESSAGE, once; then `onRetired`. */
  private retire(): void {
    if (this.retired) return;
    this.retired = true;
    for (const m of this.members()) m.stream.fail(new Error(PROJECT_CHANGED_MESSAGE));
    // The streams end as their clients read the error; no refresh, no feed meanwhile.
    this.stopTimer();
    this.opts.onRetired?.();
  }

  /** Ends every subscription and stops the change feed (its slot dropped). */
  async close(): Promise<void> {
    this.closed = true;
    for (const m of this.members()) void m.stream.return();
    this.groups.clear();
    this.stopTimer();
  }

  private startTimer(): void {
    if (this.timer) return;
    const every = this.opts.feed?.on
      ? Math.max(SAFETY_REFRESH_MS, this.opts.intervalMs)
      : this.opts.intervalMs;
    this.timer = setInterval(() => {
      this.queue.everything();
      void this.tick();
    }, every);
    this.timer.unref();
  }

  /** No groups left: no timer, and no feed (its slot would keep WAL for nobody). */
  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.delayed) clearTimeout(this.delayed);
    this.delayed = undefined;
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
    this.queue.clear();
    this.opts.feed?.remove(this.listener);
  }

  private restartTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.groups.size) this.startTimer();
  }

  /**
   * The feed's word: after each commit a refresh; when it starts or fails, the timer's period
   * changes (a safety refresh, or polling) and one refresh of everything covers what it did not report.
   */
  private readonly listener: FeedListener = {
    commit: (commit) => this.onCommit(commit),
    started: () => {
      this.restartTimer();
      this.queue.everything();
      void this.tick();
    },
    failed: () => {
      this.restartTimer();
      this.queue.everything();
      void this.tick();
    },
  };

  /**
   * A commit reported by the feed: a refresh now, or — when the last one started less than
   * MIN_REFRESH_GAP_MS ago — when that gap is over, so that a steady stream of commits costs at
   * most one refresh per gap rather than one per commit.
   */
  private onCommit(commit: Commit): void {
    this.answers.forget(commit);
    if (!this.groups.size) return;
    this.queue.commit(commit);
    this.request();
  }

  /** A refresh as soon as the gap after the last one allows (joining one that runs). */
  private request(): void {
    if (this.ticking) {
      this.again = true;
      return;
    }
    if (this.delayed) return;
    const wait = this.lastRefresh + (this.opts.gapMs ?? MIN_REFRESH_GAP_MS) - Date.now();
    if (wait <= 0) return void this.tick();
    this.delayed = setTimeout(() => {
      this.delayed = undefined;
      void this.tick();
    }, wait);
    this.delayed.unref();
  }

  /**
   * Refreshes until nothing is queued. A refresh asked for while one runs is not run alongside
   * it: the running one goes round once more when it ends, after the gap.
   */
  private async tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    try {
      do {
        const wait = this.lastRefresh + (this.opts.gapMs ?? MIN_REFRESH_GAP_MS) - Date.now();
        if (this.again && wait > 0) await new Promise((r) => setTimeout(r, wait));
        this.again = false;
        this.lastRefresh = Date.now();
        await this.refresh(this.lastRefresh);
      } while (this.again && !this.retired && !this.closed);
    } finally {
      this.ticking = false;
      this.armSettle();
    }
  }

  private armSettle(): void {
    if (this.settleTimer || this.retired || this.closed) return;
    const wait = this.queue.nextSettle(Date.now());
    if (wait === undefined) return;
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      void this.tick();
    }, wait);
    this.settleTimer.unref();
  }

  /** The schema changed: every member's scope again, and the groups they make now. */
  private async rebuild(): Promise<void> {
    this.stale = false;
    this.answers.clear();
    const before = this.members();
    const scopes = await Promise.all(
      before.map((m) => this.scopes.scopeOf(m.principal, m.request).catch(() => opaqueScope())),
    );
    const scopeOf = new Map(before.map((m, i) => [m, scopes[i] as SetScope]));
    // Members that came meanwhile keep the scope they were placed with.
    const now = this.members();
    for (const g of this.groups.values()) for (const s of g.sets.values()) s.dead = true;
    this.groups = new Map();
    for (const m of now) this.place(m, scopeOf.get(m) ?? m.set.scope);
  }

  /** The sets a refresh re-runs for `work` (every set, or those its commits may have changed). */
  private collect(work: { all: boolean; commits: Commit[] }): Map<Group, Set<VarSet>> {
    const runs = new Map<Group, Set<VarSet>>();
    for (const g of this.groups.values()) {
      let hit: Iterable<VarSet> = [];
      if (work.all) hit = g.sets.values();
      else if (work.commits.length) {
        g.index ??= new GroupIndex(g.sets.values());
        const found = new Set<VarSet>();
        for (const c of work.commits) g.index.affected(c, found);
        hit = found;
      }
      for (const s of hit) if (!s.dead) addRun(runs, s);
    }
    return runs;
  }

  /**
   * The snapshot check of a refresh's commits (the schema version; whether a snapshot sees them),
   * in the same round trip as the visibility probes `plan` calls for when there is one: the check
   * runs first, so when it sees the commits the probes do too. A plan whose probes failed is dropped.
   */
  private async check(
    xids: number[],
    plan: ProbePlan | undefined,
  ): Promise<{ checked: Checked; plan?: ProbePlan }> {
    const statement = plan ? checkStatement(xids) : undefined;
    if (!plan || !statement) return { checked: await checkNow(this.pool, xids) };
    this.counts.probes += plan.probes.length;
    const asked = await askProbes(this.pool, plan, statement);
    const checked = asked.preface ? checkedOf(asked.preface) : await checkNow(this.pool, xids);
    return { checked, plan: asked.ok ? plan : undefined };
  }

  /** One refresh: what the queue holds, narrowed to the sets the commits may have changed. */
  private async refresh(start: number): Promise<void> {
    if (this.pool.ending) return this.retire();
    const work = this.queue.take(start);
    let seen = false;
    let runs: Map<Group, Set<VarSet>> | undefined;
    let probes: ProbePlan | undefined;
    if (work.commits.length) {
      // The read sets that decide what to skip must be the schema version's now; and the
      // statements must see the commits (else they run once more to settle). Groups that can see
      // none of the rows inserted are left alone (asked with the check, applied once it saw them).
      const xids = work.commits.map((c) => c.xid);
      const known = xids.filter((x): x is number => x !== undefined);
      if (!this.stale && !work.all) {
        runs = this.collect(work);
        probes = runs.size ? planProbes(runs, work.commits, this.answers) : undefined;
      }
      const { checked, plan } = await this.check(known, probes);
      probes = plan;
      seen = checked.seen && known.length === xids.length;
      if (checked.version === undefined) work.all = true;
      else this.scopes.seen(checked.version);
    }
    if (this.stale) {
      await this.rebuild();
      // Everything runs: the sets the rebuild queued and the commits reported meanwhile with it.
      const more = this.queue.take(start);
      work.all = true;
      work.commits.push(...more.commits);
      work.newest = Math.max(work.newest, more.newest);
      if (more.commits.length) seen = false;
    }
    if (work.all || (work.commits.length && !seen)) this.counts.broad++;
    if (!runs || work.all) {
      runs = this.collect(work);
      probes = undefined;
    }
    if (seen && probes) {
      applyProbes(runs, probes);
      keepAnswers(probes, this.answers);
    }
    if (work.commits.length) {
      let total = 0;
      for (const g of this.groups.values()) total += g.sets.size;
      const ran = [...runs.values()].flatMap((sets) => [...sets]);
      this.counts.skipped += total - ran.length;
      this.queue.settle(start, work.newest, seen, work.all, ran);
    }
    // Sets whose commits only changed rows of their append shape's table, seen by the statements'
    // snapshot: those rows merged into their last result (not a set that must run whole anyway).
    const rowRuns = seen && !work.all ? this.rowRuns(runs, work.commits, work.sets) : [];
    for (const s of work.sets) if (!s.dead) addRun(runs, s);
    if (!runs.size && !rowRuns.length) return;
    await this.runAll(runs, rowRuns);
  }

  /**
   * Takes out of `runs` the sets that can be refreshed by their changed rows (newest-rows.ts),
   * as runs of their group's rows document, one per group and keys.
   */
  private rowRuns(runs: Map<Group, Set<VarSet>>, commits: Commit[], whole: Set<VarSet>): GroupRun[] {
    const out: GroupRun[] = [];
    const unions = new Map<GroupRun, Set<string>>();
    const union = (run: GroupRun) => {
      const keys = unions.get(run) ?? new Set<string>();
      unions.set(run, keys);
      return keys;
    };
    for (const [g, sets] of runs) {
      const byKeys = new Map<string, GroupRun>();
      for (const s of sets) {
        const shape = s.scope.append;
        if (!shape || !s.base || whole.has(s)) continue;
        const changed = changedKeys(s.scope, commits);
        if (!changed) continue;
        // None of the changed rows can be in its result, before or after: it stays as it is.
        if (!changed.keys.length) {
          sets.delete(s);
          continue;
        }
        const doc = mergeable(shape, s.base, changed) ? this.rowsDocumentOf(g, s) : undefined;
        if (!doc) continue;
        // A count needs the set's own keys (countedBefore); rows alone may come for the keys of
        // the group's other sets too, so that the group's sets share one statement.
        const counted = shape.countKey !== undefined;
        const k = JSON.stringify([doc.query, counted ? changed.keys : null]);
        let run = byKeys.get(k);
        if (!run) {
          run = {
            g,
            sets: [],
            rows: { doc, changed: counted ? changed : { ...changed, keys: [] }, keys: [] },
          };
          byKeys.set(k, run);
          out.push(run);
        }
        if (!counted) for (const key of changed.keys) union(run).add(key);
        run.sets.push(s);
        sets.delete(s);
      }
      for (const run of byKeys.values()) {
        const rows = run.rows as NonNullable<GroupRun['rows']>;
        const shape = run.sets[0]?.scope.append as AppendShape;
        if (unions.has(run)) rows.changed.keys = [...(unions.get(run) as Set<string>)];
        rows.keys = keyValues(shape, rows.changed.keys);
      }
      if (!sets.size) runs.delete(g);
    }
    return out;
  }

  private rowsDocumentOf(g: Group, s: VarSet): RowsDocument | undefined {
    const shape = s.scope.append;
    if (!shape) return undefined;
    const k = JSON.stringify([shape.rootKey, shape.filterField, shape.scalar]);
    g.rowsDocs ??= new Map();
    let doc = g.rowsDocs.get(k);
    if (doc === undefined) {
      doc = rowsDocument(g.query, g.operationName, shape) ?? null;
      g.rowsDocs.set(k, doc);
    }
    return doc ?? undefined;
  }

  /**
   * Runs the groups and pushes changed results. A narrow group's results wait for the schema
   * version to be confirmed: its key was chosen by the policies of that version.
   */
  private async runAll(runs: Map<Group, Set<VarSet>>, rowRuns: GroupRun[] = []): Promise<void> {
    try {
      await this.runAndPublish(runs, rowRuns);
    } finally {
      this.opts.afterRefresh?.();
    }
  }

  private async runAndPublish(runs: Map<Group, Set<VarSet>>, rowRuns: GroupRun[]): Promise<void> {
    const { held, failed, whole, counting } = await runGroups(
      this.pool,
      runs,
      this.opts.concurrency,
      this.counts,
      rowRuns,
    );
    if (this.pool.ending) return this.retire();
    for (const s of failed) this.queue.add(s);
    // Changed rows that could not be merged (a row left a full page): whole, once the gap is over.
    for (const s of whole) {
      s.base = undefined;
      this.queue.add(s);
      this.again = true;
    }
    if (!held.length && !counting.length) return;
    // After the statements: the schema version they ran at (for the narrow groups' results), and
    // a snapshot that sees at least what theirs did (for the counts kept by merging).
    const after = await checkNow(this.pool, []);
    for (const b of counting) if (after.snapshot) b.upper = after.snapshot;
    if (!held.length) return;
    const v = after.version;
    if (v !== undefined) this.scopes.seen(v);
    const ok = held.filter((r) => v !== undefined && r.set.group.version === v);
    publish(ok);
    if (ok.length < held.length) {
      // Run again after the groups are rebuilt (or the database answers again).
      for (const r of held) if (v === undefined || r.set.group.version !== v) this.queue.add(r.set);
      // Keyed at another version (e.g. placed while the groups were rebuilt): rebuild again.
      if (v !== undefined) {
        this.stale = true;
        this.again = true;
      }
    }
  }
}
