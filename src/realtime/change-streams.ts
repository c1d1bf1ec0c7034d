/**
 * The change streams of one project database (`<type>Changes`, docs/realtime.md): the change
 * feed's commits are retained (change-buffer.ts) and, per batch of commits (what arrives within
 * BATCH_MS), each group of subscribers with the same fetch (document, used variables, role,
 * claims) runs ONE request as the subscriber (change-request.ts) that returns the changed rows
 * they may see now. Whether a row was delivered to a subscriber before (which decides "left your
 * view" updates and deletes) is kept per identity (fetch, role, claims less their times), so a
 * resumed subscription of the same user gets the deletes of rows it saw on an earlier connection.
 *
 * Everything runs in one job queue per database (batches, subscribes, resumes), in order.
 */
import type pg from 'pg';
import type { Principal } from '../db/with-role.js';
import { ChangeBuffer, CURSOR_TOO_OLD_MESSAGE, type BufferedCommit } from './change-buffer.js';
import { eventsOf, fetchRecords, relevantPart, type Outcome } from './change-events.js';
import { tableKey } from './change-feed.js';
import type { ChangeRequest } from './change-request.js';
import { ChangeStream } from './change-stream.js';
import type { DatabaseFeed, FeedListener } from './database-feed.js';
import { PROJECT_CHANGED_MESSAGE } from './live-queries.js';

/** Commits that arrive within this many ms of each other are one batch. */
export const BATCH_MS = 5;
const FEED_START_TIMEOUT_MS = 15_000;
/** How often a database's streams check that its pool is open. */
const CHECK_MS = 1000;

export const FEED_UNAVAILABLE_MESSAGE =
  "Change streams need the database's change feed (logical replication), which is not available on this server";
export const FEED_STOPPED_MESSAGE =
  'The change feed stopped (logical replication broke): changes may have been missed; subscribe again without after and reload';
/** Claims that differ between two tokens of the same user (left out of the delivered index's key). */
const TOKEN_TIMES = new Set(['iat', 'exp', 'nbf', 'jti']);

export interface ChangeStreamsOptions {
  /** Row changes retained for resuming, and for how long. */
  retainedRows: number;
  retainedMs: number;
  /** Events one subscription may have waiting. */
  queue: number;
  /** Fetch requests run at once. */
  concurrency: number;
  /** The pool was closed and every stream ended: the owner forgets this instance. */
  onRetired?: () => void;
}

interface Group {
  key: string;
  identity: string;
  request: ChangeRequest;
  principal: Principal;
  streams: Set<ChangeStream>;
}

export class ChangeStreams {
  private readonly groups = new Map<string, Group>();
  /** Per identity: the node ids delivered and not since deleted or gone out of view. */
  private readonly delivered = new Map<string, { ids: Set<string>; idleSince?: number }>();
  private buffer: ChangeBuffer | undefined;
  private pending: BufferedCommit[] = [];
  private processed = 0n;
  private jobs: (() => Promise<void>)[] = [];
  private running = false;
  private batchTimer: NodeJS.Timeout | undefined;
  private lingerTimer: NodeJS.Timeout | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  private listening = false;
  private feedWaiters: (() => void)[] = [];
  private count = 0;
  private retired = false;
  /** The key columns of each table subscribed to in this run of the feed, by tableKey. */
  private readonly keys = new Map<string, string[]>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly feed: DatabaseFeed,
    private readonly opts: ChangeStreamsOptions,
  ) {}

  /** Change-stream subscriptions open. */
  get size(): number {
    return this.count;
  }

  private get epoch(): string {
    return this.buffer?.epoch ?? '';
  }

  /** Whether the feed runs and commits are retained (tests). */
  get retaining(): boolean {
    return this.buffer !== undefined;
  }

  /** A new subscription's stream, or the message that refuses it. */
  async subscribe(request: ChangeRequest, principal: Principal): Promise<ChangeStream | { refused: string }> {
    const table = request.table;
    this.keys.set(
      tableKey(table.schema, table.sqlName),
      table.key.map((k) => k.sqlName),
    );
    this.listen();
    let refused: string | undefined;
    try {
      refused = await this.check(request, principal);
    } finally {
      if (refused !== undefined || !this.buffer) this.idle();
    }
    if (refused !== undefined) return { refused };
    const stream = new ChangeStream(this.opts.queue, () => this.leave(stream, group), request.after);
    this.count++;
    const identity = JSON.stringify([request.fetchKey, principal.role, stableClaims(principal.claims)]);
    const key = JSON.stringify([request.fetchKey, request.eventKey, principal.role, principal.claims]);
    const group: Group = this.groups.get(key) ?? {
      key,
      identity,
      request,
      principal,
      streams: new Set(),
    };
    this.enqueue(async () => {
      if (stream.ended) return;
      if (request.after !== undefined) {
        const range = this.buffer?.after(request.after, this.processed);
        if (!range) return stream.end(new Error(CURSOR_TOO_OLD_MESSAGE));
        const out = await eventsOf(
          this.pool,
          group,
          range.commits,
          range.position,
          this.delivered.get(identity)?.ids,
          this.epoch,
        );
        this.apply(identity, out.delivered);
        stream.add(out.events);
        if (out.end) return stream.end(new Error(out.end));
      }
      if (stream.ended) return;
      const g = this.groups.get(key) ?? group;
      this.groups.set(key, g);
      g.streams.add(stream);
      const d = this.delivered.get(identity);
      if (d) d.idleSince = undefined;
    });
    return stream;
  }

  /** Why a subscribe is refused, if it is. */
  private async check(request: ChangeRequest, principal: Principal): Promise<string | undefined> {
    if (!(await this.feedReady())) return FEED_UNAVAILABLE_MESSAGE;
    // The filter and the record's selection, checked once as the engine would answer them.
    const probe = await fetchRecords(this.pool, request, principal, [], 1).catch((e: Error) => ({
      error: e.message,
    }));
    if ('error' in probe) return probe.error;
    if (request.after !== undefined && !this.buffer?.after(request.after, this.processed))
      return CURSOR_TOO_OLD_MESSAGE;
    return undefined;
  }

  /** Ends every stream and stops following the feed. */
  async close(): Promise<void> {
    for (const g of this.groups.values()) for (const s of [...g.streams]) void s.return();
    this.groups.clear();
    this.unlisten();
  }

  private leave(stream: ChangeStream, group: Group): void {
    this.count--;
    const g = this.groups.get(group.key);
    if (g?.streams.delete(stream) && !g.streams.size) {
      this.groups.delete(g.key);
      const d = this.delivered.get(g.identity);
      if (d && ![...this.groups.values()].some((x) => x.identity === g.identity)) d.idleSince = Date.now();
    }
    this.idle();
  }

  // --- the feed ---------------------------------------------------------------------------------

  private readonly listener: FeedListener = {
    commit: (commit) => {
      const slim = this.buffer && relevantPart(commit, this.keys);
      if (!this.buffer || !slim) return;
      this.pending.push(this.buffer.push(slim));
      if (!this.batchTimer) {
        this.batchTimer = setTimeout(() => {
          this.batchTimer = undefined;
          this.enqueue(() => this.batch());
        }, BATCH_MS);
        this.batchTimer.unref();
      }
    },
    started: () => {
      this.buffer ??= new ChangeBuffer(this.opts.retainedRows, this.opts.retainedMs);
      this.wakeWaiters();
    },
    failed: () => {
      if (this.pool.ending) return this.retire();
      this.buffer = undefined;
      this.pending = [];
      this.endAll(FEED_STOPPED_MESSAGE);
      this.wakeWaiters();
    },
  };

  private listen(): void {
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    if (this.listening) return;
    this.listening = true;
    this.feed.add(this.listener);
    if (this.feed.on) this.buffer ??= new ChangeBuffer(this.opts.retainedRows, this.opts.retainedMs);
    // A closed pool (the project deleted or moved, its JWT secret changed) ends the streams even
    // while nothing commits; the delivered index of identities gone for long is forgotten.
    this.checkTimer = setInterval(() => {
      if (this.pool.ending) this.retire();
      else this.sweep();
    }, CHECK_MS);
    this.checkTimer.unref();
  }

  /**
   * No subscription left: the feed is followed (and commits retained, for resumes) for the
   * retention time more, then let go.
   */
  private idle(): void {
    if (this.count || !this.listening || this.lingerTimer) return;
    this.lingerTimer = setTimeout(() => {
      this.lingerTimer = undefined;
      if (!this.count) this.unlisten();
    }, this.opts.retainedMs);
    this.lingerTimer.unref();
  }

  private unlisten(): void {
    if (this.checkTimer) clearInterval(this.checkTimer);
    this.checkTimer = undefined;
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.lingerTimer = undefined;
    this.batchTimer = undefined;
    this.listening = false;
    this.buffer = undefined;
    this.pending = [];
    this.delivered.clear();
    this.keys.clear();
    this.feed.remove(this.listener);
    this.wakeWaiters();
  }

  /** Waits for the feed to run; false when it cannot. */
  private async feedReady(): Promise<boolean> {
    const deadline = Date.now() + FEED_START_TIMEOUT_MS;
    while (!this.buffer) {
      if (this.feed.failed || !this.listening || Date.now() > deadline) return false;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 250);
        t.unref();
        this.feedWaiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return true;
  }

  private wakeWaiters(): void {
    const w = this.feedWaiters;
    this.feedWaiters = [];
    for (const f of w) f();
  }

  // --- the job queue ----------------------------------------------------------------------------

  private enqueue(job: () => Promise<void>): void {
    this.jobs.push(job);
    if (!this.running) void this.runJobs();
  }

  private async runJobs(): Promise<void> {
    this.running = true;
    try {
      for (let job = this.jobs.shift(); job; job = this.jobs.shift()) {
        try {
          await job();
        } catch {
          // A job's failure ends its own streams (evaluate); the next job runs.
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** The commits that arrived since the last batch, to every group. */
  private async batch(): Promise<void> {
    const commits = this.pending;
    this.pending = [];
    const last = commits.at(-1);
    if (!last) return;
    this.processed = last.lsn;
    this.sweep();
    if (this.pool.ending) return this.retire();
    const touched = (g: Group) => {
      const tk = tableKey(g.request.table.schema, g.request.table.sqlName);
      return commits.some((c) => c.anyTable || c.tables.has(tk));
    };
    const queue = [...this.groups.values()].filter(touched);
    const results = new Map<Group, Outcome>();
    // Every group reads the delivered index as it was before this batch; then all apply.
    const worker = async () => {
      for (let g = queue.shift(); g; g = queue.shift())
        results.set(
          g,
          await eventsOf(this.pool, g, commits, undefined, this.delivered.get(g.identity)?.ids, this.epoch),
        );
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, queue.length) }, worker));
    for (const [g, out] of results) this.apply(g.identity, out.delivered);
    for (const [g, out] of results)
      for (const s of g.streams) {
        s.add(out.events);
        if (out.end) s.end(new Error(out.end));
      }
  }

  private apply(identity: string, changes: Map<string, boolean>): void {
    if (!changes.size) return;
    let d = this.delivered.get(identity);
    if (!d) {
      d = { ids: new Set() };
      this.delivered.set(identity, d);
    }
    for (const [id, yes] of changes) {
      if (yes) d.ids.add(id);
      else d.ids.delete(id);
    }
  }

  /** Forgets the delivered index of identities without a subscription for the retention time. */
  private sweep(): void {
    const now = Date.now();
    const open = new Set([...this.groups.values()].map((g) => g.identity));
    for (const [k, d] of this.delivered) {
      if (open.has(k)) continue;
      d.idleSince ??= now;
      if (now - d.idleSince > this.opts.retainedMs) this.delivered.delete(k);
    }
  }

  private endAll(message: string): void {
    for (const g of this.groups.values()) for (const s of g.streams) s.end(new Error(message));
  }

  /** The project's pool was closed: every stream ends; the owner forgets this instance. */
  private retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.endAll(PROJECT_CHANGED_MESSAGE);
    this.unlisten();
    this.opts.onRetired?.();
  }
}

function stableClaims(claims: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(claims)) if (!TOKEN_TIMES.has(k)) out[k] = v;
  return out;
}
