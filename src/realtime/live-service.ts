/**
 * What both transports share: a project's multiplexer (live-queries.ts), the checks a subscribe
 * passes (a subscription of one Subscription field the subscriber's schema has), the credentials
 * of a project and the expiry of a JWT.
 */
import { AuthError, principalOf } from '../auth/principal.js';
import type { RealtimeConfig } from '../config.js';
import type { Principal } from '../db/with-role.js';
import { subscriptionFieldsWithPool, type SubscriptionField } from '../graphql/engine.js';
import type { RequestLimits } from '../graphql/http/options.js';
import type { ProjectContext } from '../platform/project-context.js';
import { startChangeFeed } from './change-feed.js';
import { DatabaseFeed } from './database-feed.js';
import { changeRequestOf } from './change-request.js';
import { ChangeStreams, FEED_UNAVAILABLE_MESSAGE } from './change-streams.js';
import { LiveQueries, TooManySubscriptions, type LiveQueryStats } from './live-queries.js';
import { GraphQLError } from 'graphql';
import { LRUCache } from 'lru-cache';
import { liveRequestOf, type LiveRequest, type SubscribePayload } from './live-request.js';
import type { Subscriber } from './subscriber.js';
import { HeapPacer } from '../platform/heap-gc.js';

export const JWT_EXPIRED_MESSAGE = 'JWT expired: the subscription ended; subscribe again with a fresh token';
const LONGEST_TIMER_MS = 2 ** 31 - 1;

export { AuthError };

export class LiveService {
  private readonly hubs = new Map<unknown, LiveQueries>();
  /** Old-generation garbage of live results collected as it piles up (platform/heap-gc.ts). */
  private readonly heap = new HeapPacer();
  /** Parsed subscription documents by operation name and text (requestOf), at most ~16 MB of text. */
  private readonly documents = new LRUCache<string, LiveRequest | GraphQLError[]>({
    maxSize: 16 * 1024 * 1024,
    sizeCalculation: (_v, key) => Math.max(1, key.length),
  });
  /** Each project database's change streams (`<type>Changes`), by its pool. */
  private readonly changeHubs = new Map<unknown, ChangeStreams>();
  /** Each project database's change feed, by its pool (live queries and change streams share it). */
  private readonly feeds = new Map<unknown, DatabaseFeed>();
  /** Retired feeds still stopping (their slots being dropped): close() waits for them too. */
  private readonly retiring = new Set<Promise<void>>();

  constructor(
    readonly config: RealtimeConfig,
    /** The HTTP API's depth and width limits, which subscriptions obey too. */
    private readonly limits: RequestLimits,
  ) {}

  /** The principal of a project's apikey and bearer token; AuthError when they are not the project's. */
  principal(
    project: ProjectContext,
    apikey: string | undefined,
    bearer: string | undefined,
  ): Promise<Principal> {
    return principalOf(
      {
        jwtSecret: project.jwtSecret,
        anonKey: project.anonKey ?? '',
        serviceRoleKey: project.serviceRoleKey ?? '',
      },
      apikey,
      bearer,
    );
  }

  /**
   * Calls `expire` when the principal's JWT expires (`exp`); the returned function cancels it.
   * Nothing for a principal without `exp` (the project's anon and service_role keys are JWTs with one).
   */
  onExpiry(principal: Principal, expire: () => void): () => void {
    const exp = principal.claims.exp;
    if (typeof exp !== 'number') return () => {};
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      const ms = exp * 1000 - Date.now();
      timer = ms > LONGEST_TIMER_MS ? setTimeout(arm, LONGEST_TIMER_MS) : setTimeout(expire, Math.max(0, ms));
      timer.unref();
    };
    arm();
    return () => clearTimeout(timer);
  }

  /**
   * liveRequestOf, its document parsed and checked once per text: subscribers of one document
   * share its AST and query text (thousands of live queries, a few documents).
   */
  private requestOf(payload: SubscribePayload): LiveRequest | GraphQLError[] {
    const { query, operationName } = payload;
    if (typeof query !== 'string' || (operationName != null && typeof operationName !== 'string'))
      return liveRequestOf(payload, this.limits);
    const key = `${operationName ?? ''}\u0000${query}`;
    let base = this.documents.get(key);
    if (!base) {
      base = liveRequestOf({ query, operationName }, this.limits);
      this.documents.set(key, base);
    }
    if (Array.isArray(base)) return base;
    const variables = payload.variables ?? null;
    if (variables !== null && (typeof variables !== 'object' || Array.isArray(variables)))
      return [new GraphQLError('variables must be an object')];
    return { ...base, variables: variables as Record<string, unknown> | null };
  }

  /** A subscribe's stream, or the message that refuses it. */
  async open(
    project: ProjectContext,
    principal: Principal,
    payload: SubscribePayload,
  ): Promise<{ request: LiveRequest; stream: Subscriber } | { refused: string }> {
    const exp = principal.claims.exp;
    if (typeof exp === 'number' && exp * 1000 <= Date.now()) return { refused: JWT_EXPIRED_MESSAGE };
    const request = this.requestOf(payload);
    if (Array.isArray(request)) return { refused: request.map((e) => e.message).join('; ') };
    let fields: ReadonlyMap<string, SubscriptionField>;
    try {
      fields = await subscriptionFieldsWithPool(project.pool, principal);
    } catch (e) {
      return { refused: e instanceof Error ? e.message : 'the schema could not be loaded' };
    }
    if (!fields.size)
      return {
        refused:
          'Unknown type Subscription: no schema turned on subscriptions (@graphql({"strata": {"subscriptions": true}}))',
      };
    const field = fields.get(request.field);
    if (!field) return { refused: `Unknown field "${request.field}" on type Subscription` };
    // Live queries and change streams count towards one limit per project.
    const live = this.hubs.get(project.pool)?.stats().subscribers ?? 0;
    const changes = this.changeHubs.get(project.pool)?.size ?? 0;
    if (live + changes >= this.config.maxPerProject)
      return {
        refused: `Too many subscriptions on this project (the limit is ${this.config.maxPerProject})`,
      };
    if (field.kind === 'changes') {
      if (!this.config.replication)
        return { refused: `${FEED_UNAVAILABLE_MESSAGE} (STRATA_REALTIME_REPLICATION is off)` };
      const changeRequest = changeRequestOf(request, field.table);
      if ('refused' in changeRequest) return changeRequest;
      const opened = await this.changesOf(project).subscribe(changeRequest, principal);
      return 'refused' in opened ? opened : { request, stream: opened };
    }
    try {
      return { request, stream: await this.hubOf(project).subscribe(request, principal) };
    } catch (e) {
      if (e instanceof TooManySubscriptions) return { refused: e.message };
      throw e;
    }
  }

  stats(): LiveQueryStats {
    const out: LiveQueryStats = {
      groups: 0,
      variableSets: 0,
      subscribers: 0,
      executions: 0,
      refreshedSets: 0,
      merged: 0,
      skipped: 0,
      probes: 0,
      broad: 0,
      feeds: 0,
    };
    const fields = Object.keys(out) as (keyof LiveQueryStats)[];
    for (const h of this.hubs.values()) {
      const s = h.stats();
      for (const f of fields) out[f] += s[f];
    }
    return out;
  }

  /** Change-stream subscriptions open on this node. */
  changeStreamCount(): number {
    let n = 0;
    for (const h of this.changeHubs.values()) n += h.size;
    return n;
  }

  async close(): Promise<void> {
    const hubs = [...this.hubs.values()];
    this.hubs.clear();
    const changeHubs = [...this.changeHubs.values()];
    this.changeHubs.clear();
    await Promise.all([...hubs.map((h) => h.close()), ...changeHubs.map((h) => h.close())]);
    const feeds = [...this.feeds.values()];
    this.feeds.clear();
    await Promise.all([...feeds.map((f) => f.close()), ...this.retiring]);
  }

  /** The project database's change feed (started by its first listener). */
  feedOf(project: ProjectContext): DatabaseFeed {
    let feed = this.feeds.get(project.pool);
    if (!feed) {
      feed = new DatabaseFeed(
        this.config.replication
          ? (onCommit, onFailure) => startChangeFeed(project.superuserUrl, onCommit, onFailure)
          : undefined,
      );
      this.feeds.set(project.pool, feed);
    }
    return feed;
  }

  /** A retired hub's feed (its pool closed: the project is gone or changed) is forgotten and stopped. */
  private retireFeed(pool: unknown, feed: DatabaseFeed): void {
    if (this.feeds.get(pool) === feed) this.feeds.delete(pool);
    const closing: Promise<void> = feed
      .close()
      .catch(() => {})
      .finally(() => this.retiring.delete(closing));
    this.retiring.add(closing);
  }

  private changesOf(project: ProjectContext): ChangeStreams {
    let hub = this.changeHubs.get(project.pool);
    if (!hub) {
      const pool = project.pool;
      const feed = this.feedOf(project);
      hub = new ChangeStreams(pool, feed, {
        retainedRows: this.config.changesRetained,
        retainedMs: this.config.changesRetainedMs,
        queue: this.config.changesQueue,
        concurrency: this.config.concurrency,
        onRetired: () => {
          this.changeHubs.delete(pool);
          this.retireFeed(pool, feed);
        },
      });
      this.changeHubs.set(pool, hub);
    }
    return hub;
  }

  private hubOf(project: ProjectContext): LiveQueries {
    let hub = this.hubs.get(project.pool);
    if (!hub) {
      const pool = project.pool;
      const feed = this.feedOf(project);
      hub = new LiveQueries(pool, {
        onRetired: () => {
          this.hubs.delete(pool);
          this.retireFeed(pool, feed);
        },
        intervalMs: this.config.intervalMs,
        gapMs: this.config.gapMs,
        maxSubscribers: this.config.maxPerProject,
        concurrency: this.config.concurrency,
        feed,
        afterRefresh: () => this.heap.check(),
      });
      this.hubs.set(project.pool, hub);
    }
    return hub;
  }
}
