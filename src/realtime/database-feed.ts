/**
 * One change feed per project database, shared by whatever follows it (live queries, change
 * streams): started when the first listener comes, stopped (its slot dropped) when the last one
 * leaves. A feed that cannot start (wal_level, privilege, no free slot) or that breaks leaves the
 * state `failed`; listeners then poll, and a listener added RETRY_MS or more after the failure
 * tries again (a server back from a restart, a slot freed).
 */
import type { ChangeFeed, Commit } from './change-feed.js';

export type FeedStarter = (
  onCommit: (commit: Commit) => void,
  onFailure: (err: Error) => void,
) => Promise<ChangeFeed>;

export interface FeedListener {
  /** A transaction that changed rows committed. */
  commit(commit: Commit): void;
  /** The feed runs: what committed before it started was not reported. */
  started(): void;
  /** The feed is not available, or broke: what committed since its last report is unknown. */
  failed(): void;
}

/** Least time after a failure before a new listener starts the feed again. */
export const RETRY_MS = 5_000;

export class DatabaseFeed {
  private failedAt = 0;
  private readonly listeners = new Set<FeedListener>();
  private feed: ChangeFeed | undefined;
  private state: 'none' | 'starting' | 'on' | 'failed' = 'none';
  private readonly closing = new Set<Promise<void>>();

  /** `start`: none when replication is turned off (listeners poll). */
  constructor(private readonly start?: FeedStarter) {}

  /** Commits are reported (else listeners poll). */
  get on(): boolean {
    return this.state === 'on';
  }

  /** The feed could not start, or broke (for good). */
  get failed(): boolean {
    return this.state === 'failed';
  }

  add(listener: FeedListener): void {
    this.listeners.add(listener);
    this.ensure();
  }

  remove(listener: FeedListener): void {
    if (this.listeners.delete(listener) && !this.listeners.size) this.stop();
  }

  /** Stops the feed (its slot dropped), also one still starting. */
  async close(): Promise<void> {
    this.listeners.clear();
    this.stop();
    while (this.closing.size) await Promise.all([...this.closing]);
  }

  private each(call: (l: FeedListener) => void): void {
    for (const l of [...this.listeners]) {
      try {
        call(l);
      } catch {
        // One listener's failure is not another's.
      }
    }
  }

  private ensure(): void {
    if (this.state === 'failed' && Date.now() - this.failedAt >= RETRY_MS) this.state = 'none';
    if (!this.start || this.state !== 'none') return;
    this.state = 'starting';
    const starting = this.start(
      (commit) => this.each((l) => l.commit(commit)),
      () => {
        // Replication broke (server restart, slot dropped): listeners poll from now on.
        this.feed = undefined;
        this.state = 'failed';
        this.failedAt = Date.now();
        this.each((l) => l.failed());
      },
    ).then(
      (feed) => {
        if (!this.listeners.size || this.state !== 'starting') {
          if (this.state === 'starting') this.state = 'none';
          this.track(feed.close());
          return;
        }
        this.feed = feed;
        this.state = 'on';
        this.each((l) => l.started());
      },
      () => {
        this.state = 'failed';
        this.failedAt = Date.now();
        this.each((l) => l.failed());
      },
    );
    this.track(starting);
  }

  private stop(): void {
    const feed = this.feed;
    this.feed = undefined;
    if (this.state === 'on' || this.state === 'starting') this.state = 'none';
    if (feed) this.track(feed.close());
  }

  private track(p: Promise<void>): void {
    const tracked = p.catch(() => {}).finally(() => this.closing.delete(tracked));
    this.closing.add(tracked);
  }
}
