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
import { resolveWithPoolText } from '../graphql/engine.js';
import { nodeIdOfText } from '../graphql/introspect/change-streams.js';
import {
  ChangeBuffer,
  CURSOR_TOO_OLD_MESSAGE,
  encodeCursor,
  type BufferedCommit,
  type Position,
} from './change-buffer.js';
import { tableKey } from './change-feed.js';
import { NODE_ID_ALIAS, type ChangeOp, type ChangeRequest } from './change-request.js';
import { ChangeStream } from './change-stream.js';
import type { DatabaseFeed, FeedListener } from './database-feed.js';
import { PROJECT_CHANGED_MESSAGE } from './live-queries.js';
import type { LiveResult } from './subscriber.js';

/** Commits that arrive within this many ms of each other are one batch. */
export const BATCH_MS = 5;
const FEED_START_TIMEOUT_MS = 15_000;

export const FEED_UNAVAILABLE_MESSAGE =
  "Change streams need the database's change feed (logical replication), which is not available on this server";
export const FEED_STOPPED_MESSAGE =
  'The change feed stopped (logical replication broke): changes may have been missed; subscribe again without after and reload';
export const TOO_LARGE_MESSAGE =
  'The change set was too large to stream (a transaction changed more rows than the feed reports one by one, or truncated the table): subscribe again without after and reload';

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

/** One row change of a subscribed table, with its cursor position. */
interface Item {
  position: Position;
  op: ChangeOp;
  /** The row's node id now (INSERT/UPDATE: the new key; DELETE: the old). */
  nodeId: string;
  /** An UPDATE that changed the key: the old key's node id. */
  oldNodeId?: string;
}

interface Outcome {
  events: { result: LiveResult; cursor: string }[];
  /** Node ids now delivered (true) or no longer (false). */
  delivered: Map<string, boolean>;
  end?: string;
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
  private listening = false;
  private feedWaiters: (() => void)[] = [];
  private count = 0;
  private retired = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly feed: DatabaseFeed,
    private readonly opts: ChangeStreamsOptions,
  ) {}

  /** Change-stream subscriptions open. */
  get size(): number {
    return this.count;
  }

  /** Whether the feed runs and commits are retained (tests). */
  get retaining(): boolean {
    return this.buffer !== undefined;
  }

  /** A new subscription's stream, or the message that refuses it. */
  async subscribe(request: ChangeRequest, principal: Principal): Promise<ChangeStream | { refused: string }> {
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
    const key = JSON.stringify([request.fetchKey, principal.role, principal.claims]);
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
        const out = await this.evaluate(
          group,
          range.commits,
          range.position,
          this.delivered.get(identity)?.ids,
        );
        this.apply(identity, out.delivered);
        for (const e of out.events) stream.add(e.result, e.cursor);
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
    const probe = await this.fetch(request, principal, [], 1).catch((e: Error) => ({ error: e.message }));
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
      if (!this.buffer) return;
      this.pending.push(this.buffer.push(commit));
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
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.lingerTimer = undefined;
    this.batchTimer = undefined;
    this.listening = false;
    this.buffer = undefined;
    this.pending = [];
    this.delivered.clear();
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
        results.set(g, await this.evaluate(g, commits, undefined, this.delivered.get(g.identity)?.ids));
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, queue.length) }, worker));
    for (const [g, out] of results) this.apply(g.identity, out.delivered);
    for (const [g, out] of results)
      for (const s of g.streams) {
        for (const e of out.events) s.add(e.result, e.cursor);
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
    for (const [k, d] of this.delivered)
      if (d.idleSince !== undefined && now - d.idleSince > this.opts.retainedMs) this.delivered.delete(k);
  }

  // --- one group's events -----------------------------------------------------------------------

  /**
   * The events of `commits` (after `from`) for a group: its table's row changes, each matched with
   * the record the group's subscribers may see now.
   */
  private async evaluate(
    g: Pick<Group, 'request' | 'principal'>,
    commits: readonly BufferedCommit[],
    from: Position | undefined,
    before: ReadonlySet<string> | undefined,
  ): Promise<Outcome> {
    const table = g.request.table;
    const tk = tableKey(table.schema, table.sqlName);
    const epoch = this.buffer?.epoch ?? '';
    const items: Item[] = [];
    let end: string | undefined;
    scan: for (const c of commits) {
      if (from && c.lsn < from.lsn) continue;
      if (!c.changes) {
        if (c.anyTable || c.tables.has(tk)) {
          end = TOO_LARGE_MESSAGE;
          break;
        }
        continue;
      }
      for (let index = 0; index < c.changes.length; index++) {
        if (from && c.lsn === from.lsn && index <= from.index) continue;
        const ch = c.changes[index];
        if (!ch || ch.schema !== table.schema || ch.table !== table.sqlName) continue;
        if (ch.op === 'TRUNCATE') {
          end = TOO_LARGE_MESSAGE;
          break scan;
        }
        const position = { lsn: c.lsn, index };
        if (ch.op === 'DELETE') {
          const id = ch.old && nodeIdOfText(table, ch.old);
          if (id) items.push({ position, op: 'DELETE', nodeId: id });
          continue;
        }
        const id = ch.new && nodeIdOfText(table, ch.new);
        if (!id) continue;
        const old = ch.op === 'UPDATE' && ch.old ? nodeIdOfText(table, { ...ch.new, ...ch.old }) : undefined;
        items.push({ position, op: ch.op, nodeId: id, ...(old && old !== id ? { oldNodeId: old } : {}) });
      }
    }
    const out: Outcome = { events: [], delivered: new Map() };
    if (items.length) {
      const keys = [...new Set(items.filter((i) => i.op !== 'DELETE').map((i) => i.nodeId))];
      let records = new Map<string, Record<string, unknown>>();
      if (keys.length) {
        const fetched = await this.fetch(g.request, g.principal, keys).catch((e: Error) => ({
          error: e.message,
        }));
        if ('error' in fetched) {
          out.end = `The changes could not be read: ${fetched.error}`;
          return out;
        }
        records = fetched.records;
      }
      const has = (id: string) => out.delivered.get(id) ?? before?.has(id) ?? false;
      const emit = (i: Item, op: ChangeOp, record: Record<string, unknown> | null, nodeId: string) =>
        out.events.push({
          result: g.request.event(op, record, nodeId, encodeCursor(epoch, i.position)),
          cursor: encodeCursor(epoch, i.position),
        });
      for (const i of items) {
        if (i.oldNodeId && has(i.oldNodeId)) {
          emit(i, 'DELETE', null, i.oldNodeId);
          out.delivered.set(i.oldNodeId, false);
        }
        if (i.op === 'DELETE') {
          if (has(i.nodeId)) {
            emit(i, 'DELETE', null, i.nodeId);
            out.delivered.set(i.nodeId, false);
          }
          continue;
        }
        const record = records.get(i.nodeId);
        if (record) {
          emit(i, i.op, record, i.nodeId);
          out.delivered.set(i.nodeId, true);
        } else if (has(i.nodeId)) {
          // It was theirs and is not now (moved out of their view, or gone since).
          emit(i, 'UPDATE', null, i.nodeId);
          out.delivered.set(i.nodeId, false);
        }
      }
    }
    if (end) out.end = end;
    return out;
  }

  /** The records of `keys` the principal may see now, by node id; rejects with the engine's first error. */
  private async fetch(
    request: ChangeRequest,
    principal: Principal,
    keys: readonly string[],
    first?: number,
  ): Promise<{ records: Map<string, Record<string, unknown>> }> {
    const text = await resolveWithPoolText(this.pool, principal, request.fetch(keys, first));
    const body = JSON.parse(text) as {
      data?: Record<string, { edges?: { node?: Record<string, unknown> }[] } | null> | null;
      errors?: { message?: string }[];
    };
    if (body.errors?.length) throw new Error(body.errors.map((e) => e.message).join('; '));
    const records = new Map<string, Record<string, unknown>>();
    for (const conn of Object.values(body.data ?? {}))
      for (const edge of conn?.edges ?? []) {
        const node = edge.node;
        if (!node) continue;
        const { [NODE_ID_ALIAS]: id, ...record } = node;
        if (typeof id === 'string') records.set(id, record);
      }
    return { records };
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
