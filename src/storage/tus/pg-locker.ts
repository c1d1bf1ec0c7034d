/**
 * One lock per resumable upload id, shared through PostgreSQL: a session advisory lock on a
 * connection of a small dedicated pool, held from `lock` to `unlock` (which @tus/server calls in a
 * `finally`). Several Strata nodes on one database therefore never write one upload at once.
 * A request that wants a lock another request holds asks the holder to let go (tus's
 * `requestRelease`: the holder stops reading its body, keeps what it wrote, and unlocks), so a
 * client that reconnects after a dropped connection resumes at once instead of waiting: directly
 * within this process, and through the platform's cluster invalidation channel (NOTIFY, event kind
 * 'tus-release') when another node holds it.
 */
import type pg from 'pg';
import type { ClusterEvents } from '../../platform/cluster-events.js';
import { leasePooledClient, type PooledClientLease } from '../../db/pooled-client.js';
import type { Lock, Locker, RequestRelease } from '@tus/utils';
import { tryLockUpload, unlockUpload } from '../database/index.js';
import { errors } from '../errors.js';

const RETRY_MS = 50;
const RELEASE_ASK_MS = 1_000;

export class PgLocker implements Locker {
  /** Locks held in this process, by upload id. */
  readonly held = new Map<string, { release: RequestRelease }>();

  private readonly unsubscribe?: () => void;

  constructor(
    readonly pool: pg.Pool,
    readonly timeoutMs = 30_000,
    /** The platform's cluster channel and this project's ref: other nodes' holders are asked too. */
    readonly cluster?: { events: ClusterEvents; ref: string },
  ) {
    if (cluster)
      this.unsubscribe = cluster.events.subscribe((e) => {
        if (e?.kind !== 'tus-release' || e.ref !== cluster.ref || !e.key) return;
        void this.held.get(e.key)?.release();
      });
  }

  /** Asks whichever other node holds `id` to let go. */
  askOthers(id: string): Promise<void> {
    return (
      this.cluster?.events.publish({ kind: 'tus-release', ref: this.cluster.ref, key: id }) ??
      Promise.resolve()
    );
  }

  close(): void {
    this.unsubscribe?.();
  }

  newLock(id: string): Lock {
    return new PgLock(id, this);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class PgLock implements Lock {
  private lease?: PooledClientLease;
  private readonly token = {};

  constructor(
    private readonly id: string,
    private readonly locker: PgLocker,
  ) {}

  async lock(signal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    const deadline = Date.now() + this.locker.timeoutMs;
    let askedAt = 0;
    for (;;) {
      // The reference's LockTimeout (503), which tus clients retry; @tus/server's own is a 500.
      if (signal.aborted || Date.now() > deadline) throw errors.lockTimeout();
      const holder = this.locker.held.get(this.id);
      if (holder) {
        await holder.release();
        await sleep(RETRY_MS);
        continue;
      }
      const entry = { release: requestRelease, token: this.token };
      this.locker.held.set(this.id, entry);
      let got = false;
      let lease: PooledClientLease | undefined;
      try {
        lease = await leasePooledClient(this.locker.pool);
        got = await tryLockUpload(lease.client, this.id);
      } finally {
        if (got) this.lease = lease;
        else {
          lease?.giveBack();
          if (this.locker.held.get(this.id) === entry) this.locker.held.delete(this.id);
        }
      }
      if (got) return;
      // Held by another node: ask it to let go, as a request of this process would be asked.
      if (Date.now() - askedAt >= RELEASE_ASK_MS) {
        askedAt = Date.now();
        await this.locker.askOthers(this.id);
      }
      await sleep(RETRY_MS * 4);
    }
  }

  async unlock(): Promise<void> {
    const lease = this.lease;
    this.lease = undefined;
    const entry = this.locker.held.get(this.id) as { token?: object } | undefined;
    if (entry?.token === this.token) this.locker.held.delete(this.id);
    if (!lease) return;
    let failed: unknown;
    try {
      await unlockUpload(lease.client, this.id);
    } catch (err) {
      failed = err;
    } finally {
      // A connection whose unlock failed may still hold the lock: it is closed, not reused.
      lease.giveBack(failed);
    }
  }
}
