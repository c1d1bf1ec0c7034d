/**
 * The live queries of one project database, multiplexed: subscribers whose query, variables,
 * role and claims are equal share one group, and a group runs one statement per refresh however
 * many subscribe to it. A refresh runs every group (at most `concurrency` at once) and pushes a
 * result to a subscriber only when its hash changed for them. Refreshes come from the change feed
 * (change-feed.ts: after each commit that changed rows in the database, plus a safety refresh
 * every SAFETY_REFRESH_MS) while it runs, else every `intervalMs` (polling).
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Principal } from '../db/with-role.js';
import { resolveWithPoolText } from '../graphql/engine.js';
import type { Commit } from './change-feed.js';
import type { DatabaseFeed, FeedListener } from './database-feed.js';
import type { LiveRequest } from './live-request.js';
import { Subscriber, type LiveResult } from './subscriber.js';

interface Group {
  key: string;
  request: LiveRequest;
  principal: Principal;
  subscribers: Set<Subscriber>;
  /** The last result and its hash (undefined until the first run ends). */
  last?: { result: LiveResult; hash: string };
  running?: Promise<void>;
}

export interface LiveQueryStats {
  /** Groups: distinct (query, variables, role, claims). */
  groups: number;
  subscribers: number;
  /** Statements run since start (one per group per refresh). */
  executions: number;
  /** Databases whose live queries are refreshed by logical replication rather than polled. */
  feeds: number;
}

/** Least time between the starts of two refreshes that commits asked for (latency vs. statements per change). */
export const MIN_REFRESH_GAP_MS = 50;

/** With a change feed, refreshes that no commit asked for (time-dependent results: now() in a policy). */
export const SAFETY_REFRESH_MS = 60_000;

/** After the latest reported commit, one more refresh (see onCommit). */
export const COMMIT_SETTLE_MS = 250;

export class TooManySubscriptions extends Error {}

export const PROJECT_CHANGED_MESSAGE =
  "The project's database connection was closed (the project was deleted or moved, or its JWT secret changed): subscribe again";

export class LiveQueries {
  private readonly groups = new Map<string, Group>();
  private subscriberCount = 0;
  private executions = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private again = false;
  private retired = false;
  /** When the last refresh started, and the refresh a commit asked for within the gap after it. */
  private lastRefresh = 0;
  private delayed: NodeJS.Timeout | undefined;
  /** The refresh COMMIT_SETTLE_MS after the latest reported commit. */
  private settle: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: {
      intervalMs: number;
      maxSubscribers: number;
      concurrency: number;
      /** The change feed of this database (followed while there are groups); none: poll. */
      feed?: DatabaseFeed;
      /** The pool was closed and every subscription ended: the owner forgets this instance. */
      onRetired?: () => void;
    },
  ) {}

  stats(): LiveQueryStats {
    return {
      groups: this.groups.size,
      subscribers: this.subscriberCount,
      executions: this.executions,
      feeds: this.opts.feed?.on ? 1 : 0,
    };
  }

  /** A new subscriber's stream: the group's last result at once when it has one, else after its first run. */
  subscribe(request: LiveRequest, principal: Principal): Subscriber {
    if (this.subscriberCount >= this.opts.maxSubscribers)
      throw new TooManySubscriptions(
        `Too many subscriptions on this project (the limit is ${this.opts.maxSubscribers})`,
      );
    const key = JSON.stringify([
      request.query,
      request.operationName,
      request.variables,
      principal.role,
      principal.claims,
    ]);
    let group = this.groups.get(key);
    if (!group) {
      group = { key, request, principal, subscribers: new Set() };
      this.groups.set(key, group);
    }
    const g = group;
    const sub = new Subscriber(() => {
      if (!g.subscribers.delete(sub)) return;
      this.subscriberCount--;
      if (!g.subscribers.size && this.groups.get(g.key) === g) this.groups.delete(g.key);
      if (!this.groups.size) this.stopTimer();
    });
    g.subscribers.add(sub);
    this.subscriberCount++;
    if (g.last) sub.push(g.last.result, g.last.hash);
    else void this.run(g);
    this.startTimer();
    this.opts.feed?.add(this.listener);
    return sub;
  }

  /** Ends every subscription with PROJECT_CHANGED_MESSAGE, once; then `onRetired`. */
  private retire(): void {
    if (this.retired) return;
    this.retired = true;
    for (const g of [...this.groups.values()])
      for (const s of [...g.subscribers]) s.fail(new Error(PROJECT_CHANGED_MESSAGE));
    // The streams end as their clients read the error; no refresh, no feed meanwhile.
    this.stopTimer();
    this.opts.onRetired?.();
  }

  /** Ends every subscription and stops the change feed (its slot dropped). */
  async close(): Promise<void> {
    for (const g of this.groups.values()) for (const s of [...g.subscribers]) void s.return();
    this.groups.clear();
    this.stopTimer();
  }

  private startTimer(): void {
    if (this.timer) return;
    const every = this.opts.feed?.on
      ? Math.max(SAFETY_REFRESH_MS, this.opts.intervalMs)
      : this.opts.intervalMs;
    this.timer = setInterval(() => void this.tick(), every);
    this.timer.unref();
  }

  /** No groups left: no timer, and no feed (its slot would keep WAL for nobody). */
  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.delayed) clearTimeout(this.delayed);
    this.delayed = undefined;
    if (this.settle) clearTimeout(this.settle);
    this.settle = undefined;
    this.opts.feed?.remove(this.listener);
  }

  private restartTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.groups.size) this.startTimer();
  }

  /**
   * The feed's word: after each commit a refresh; when it starts or fails, the timer's period
   * changes (a safety refresh, or polling) and one refresh covers what it did not report.
   */
  private readonly listener: FeedListener = {
    commit: (commit) => this.onCommit(commit),
    started: () => {
      this.restartTimer();
      void this.tick();
    },
    failed: () => {
      this.restartTimer();
      void this.tick();
    },
  };

  /**
   * A commit reported by the feed: a refresh now, or — when the last one started less than
   * MIN_REFRESH_GAP_MS ago — when that gap is over, so that a steady stream of commits costs at
   * most one refresh per gap rather than one per commit.
   */
  private onCommit(_commit: Commit): void {
    // A commit is decoded from the WAL a moment before it is visible to new snapshots
    // (PostgreSQL flushes the commit record, then ends the transaction in the proc array): a
    // refresh started in between misses it. One more refresh after the commits settle covers that
    // window; a steady stream of commits keeps pushing it back, so it costs one refresh per burst.
    if (this.settle) clearTimeout(this.settle);
    this.settle = setTimeout(() => {
      this.settle = undefined;
      void this.tick();
    }, COMMIT_SETTLE_MS);
    this.settle.unref();
    if (this.ticking) {
      this.again = true;
      return;
    }
    if (this.delayed) return;
    const wait = this.lastRefresh + MIN_REFRESH_GAP_MS - Date.now();
    if (wait <= 0) return void this.tick();
    this.delayed = setTimeout(() => {
      this.delayed = undefined;
      void this.tick();
    }, wait);
    this.delayed.unref();
  }

  /**
   * One refresh of every group. A refresh asked for while one runs is not run alongside it: the
   * running one goes round once more when it ends (a commit it may have missed), after the gap.
   */
  private async tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    try {
      do {
        const wait = this.lastRefresh + MIN_REFRESH_GAP_MS - Date.now();
        if (this.again && wait > 0) await new Promise((r) => setTimeout(r, wait));
        this.again = false;
        this.lastRefresh = Date.now();
        const queue = [...this.groups.values()];
        const worker = async () => {
          for (let g = queue.shift(); g; g = queue.shift()) await this.run(g);
        };
        await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, queue.length) }, worker));
      } while (this.again);
    } finally {
      this.ticking = false;
    }
  }

  /** Runs the group's statement once (joining a run in progress) and pushes a changed result. */
  private run(g: Group): Promise<void> {
    g.running ??= this.execute(g).finally(() => {
      g.running = undefined;
    });
    return g.running;
  }

  private async execute(g: Group): Promise<void> {
    if (!g.subscribers.size) return;
    // The project's pool was closed: the project was deleted or moved, or its JWT secret changed
    // (the engine answers a closed pool as an error result). Its subscriptions end; a client
    // subscribes again against what the project is now.
    if (this.pool.ending) return this.retire();
    this.executions++;
    let text: string;
    try {
      text = await resolveWithPoolText(this.pool, g.principal, {
        query: g.request.query,
        variables: g.request.variables,
        operationName: g.request.operationName,
      });
    } catch {
      // The database is unreachable: the next refresh tries again.
      return;
    }
    if (this.pool.ending) return this.retire();
    const hash = createHash('sha256').update(text).digest('base64');
    if (g.last?.hash !== hash) g.last = { result: JSON.parse(text) as LiveResult, hash };
    const last = g.last;
    for (const s of g.subscribers) s.push(last.result, last.hash);
  }
}
