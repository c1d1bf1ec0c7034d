/**
 * The live queries of one project database, multiplexed: subscribers whose query, variables,
 * role and claims are equal share one group, and a group runs one statement per refresh however
 * many subscribe to it. Every `intervalMs` each group runs again (at most `concurrency` at once)
 * and its subscribers get the result only when its hash changed for them.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Principal } from '../db/with-role.js';
import { resolveWithPoolText } from '../graphql/engine.js';
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
}

export class TooManySubscriptions extends Error {}

export class LiveQueries {
  private readonly groups = new Map<string, Group>();
  private subscriberCount = 0;
  private executions = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: { intervalMs: number; maxSubscribers: number; concurrency: number },
  ) {}

  stats(): LiveQueryStats {
    return { groups: this.groups.size, subscribers: this.subscriberCount, executions: this.executions };
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
    return sub;
  }

  close(): void {
    this.stopTimer();
    for (const g of this.groups.values()) for (const s of [...g.subscribers]) void s.return();
    this.groups.clear();
  }

  private startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.opts.intervalMs);
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One refresh of every group; a refresh still running when the next is due is not doubled. */
  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const queue = [...this.groups.values()];
      const worker = async () => {
        for (let g = queue.shift(); g; g = queue.shift()) await this.run(g);
      };
      await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, queue.length) }, worker));
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
    this.executions++;
    let text: string;
    try {
      text = await resolveWithPoolText(this.pool, g.principal, {
        query: g.request.query,
        variables: g.request.variables,
        operationName: g.request.operationName,
      });
    } catch {
      // The database is unreachable (or the pool closed): the next refresh tries again.
      return;
    }
    const hash = createHash('sha256').update(text).digest('base64');
    if (g.last?.hash !== hash) g.last = { result: JSON.parse(text) as LiveResult, hash };
    const last = g.last;
    for (const s of g.subscribers) s.push(last.result, last.hash);
  }
}
