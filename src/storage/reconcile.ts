/**
 * Storage reconciliation: after a crash (or a client that went away at the wrong moment) a backend
 * can hold temporary files, versions whose row never committed, and empty folders. On start and
 * then every `storageSweepIntervalMs`, each project's backend is swept of what is older than
 * `storageSweepGraceMs`. A version is removed only if no committed row references it, checked
 * under the key's commit lock (`lockKey`, database/object-writes.ts), so a commit cannot slip in
 * between; the grace period keeps an upload between its rename and its commit out of the
 * candidates at all.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Platform } from '../platform/platform.js';
import type { ProjectContext } from '../platform/project-context.js';
import { liveProjectRefs } from '../platform/projects.js';
import { SERVICE } from './auth.js';
import type { Backends } from './backend/index.js';
import type { ObjectLocation, StorageBackend, SweepReport } from './backend/interface.js';
import { inTx, isVersionLive, lockKey, selectLiveVersions } from './database/index.js';
import { OPERATIONS } from './operations.js';

/** Extra work of a pass that is not about object versions (e.g. expired resumable uploads). */
export type ProjectSweeper = (project: ProjectContext, before: number) => Promise<number>;

const idOf = (l: { bucket: string; key: string; version: string }) =>
  `${l.bucket}\u0000${l.key}\u0000${l.version}`;

/** Of `candidates`, the ones a committed row references. */
async function referenced(project: ProjectContext, candidates: ObjectLocation[]): Promise<Set<string>> {
  const rows = await inTx(project, SERVICE, OPERATIONS.RECONCILE, (db) => selectLiveVersions(db, candidates));
  const ids = new Set<string>();
  for (const r of rows)
    if (r.version !== null) ids.add(idOf({ bucket: r.bucket_id, key: r.name, version: r.version }));
  return ids;
}

/** One pass over one project's backend. */
export async function reconcileProject(
  project: ProjectContext,
  backend: StorageBackend,
  graceMs: number,
  now = Date.now(),
): Promise<SweepReport> {
  return backend.sweep({
    before: now - graceMs,
    async removeUnreferenced(candidates, remove) {
      const kept = await referenced(project, candidates);
      let removed = 0;
      for (const c of candidates) {
        if (kept.has(idOf(c))) continue;
        const gone = await inTx(project, SERVICE, OPERATIONS.RECONCILE, async (db) => {
          await lockKey(db, c.bucket, c.key);
          if (await isVersionLive(db, c)) return false;
          await remove(c);
          return true;
        });
        if (gone) removed++;
      }
      return removed;
    },
  });
}

export class StorageJanitor {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private readonly extra: ProjectSweeper[] = [];

  constructor(
    private readonly platform: Platform,
    private readonly backends: Backends,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Adds work to every pass (run after the backend sweep of each project). */
  also(sweeper: ProjectSweeper): void {
    this.extra.push(sweeper);
  }

  /** The first pass now (in the background), then one per interval. */
  start(): void {
    this.trigger();
    const every = this.platform.config.storageSweepIntervalMs;
    if (every > 0) {
      this.timer = setInterval(() => this.trigger(), every);
      this.timer.unref();
    }
  }

  private trigger(): void {
    if (this.running || this.stopped) return;
    this.running = this.runOnce()
      .then(() => {})
      .catch((err) => this.log.warn({ err }, 'storage reconciliation failed'))
      .finally(() => {
        this.running = undefined;
      });
  }

  /** One pass over every live project; resolves with the total removed. */
  async runOnce(): Promise<SweepReport & { expired: number }> {
    const total = { tempFiles: 0, orphans: 0, folders: 0, expired: 0 };
    const refs = await liveProjectRefs(this.platform.pool);
    const grace = this.platform.config.storageSweepGraceMs;
    for (const ref of refs) {
      if (this.stopped) break;
      const project = await this.platform.project(ref).catch(() => undefined);
      if (!project) continue;
      try {
        const r = await reconcileProject(project, this.backends.for(project), grace);
        total.tempFiles += r.tempFiles;
        total.orphans += r.orphans;
        total.folders += r.folders;
        for (const sweeper of this.extra) total.expired += await sweeper(project, Date.now() - grace);
      } catch (err) {
        this.log.warn({ err, project: ref }, 'storage reconciliation of a project failed');
      }
    }
    if (total.tempFiles || total.orphans || total.expired)
      this.log.info(total, 'storage reconciliation removed leftovers');
    return total;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
