/**
 * Changes the functions runtime must hear of, owned by the platform so that the Management API
 * (which makes them) and the runtime (which caches function specs and runs workers) need not know
 * each other: the Management API announces a deploy, update or delete of a function, a change of
 * a project's secrets, or a project being deleted; the runtime this server built
 * (functions/index.ts) listens. Changes are also announced to the other processes sharing the
 * platform database (cluster-events.ts, kind 'functions'), and theirs reach the listeners here.
 */
import type { ClusterEvents } from './cluster-events.js';

export interface FunctionsListener {
  /** A function was deployed, updated or deleted (`slug`), or (no `slug`) the project's secrets changed. */
  changed(ref: string, slug?: string): void;
  /** Another process's announcements may have been missed (its listener reconnected): all is stale. */
  missed(): void;
  /** The project is being deleted: its function workers stop and its functions' files go. */
  projectRemoved(ref: string): Promise<void>;
}

export class FunctionEvents {
  private readonly listeners = new Set<FunctionsListener>();

  constructor(private readonly cluster: ClusterEvents) {
    cluster.subscribe((e) => {
      if (!e) for (const l of this.listeners) l.missed();
      else if (e.kind === 'functions') for (const l of this.listeners) l.changed(e.ref, e.key);
    });
  }

  /** Returns the unsubscribe function. */
  subscribe(listener: FunctionsListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** After a function's code/metadata changed (`slug`) or, without `slug`, the project's secrets. */
  announceChange(ref: string, slug?: string): void {
    for (const l of this.listeners) l.changed(ref, slug);
    void this.cluster.publish({ kind: 'functions', ref, key: slug });
  }

  /** Before the project's database is dropped (Platform.deleteProject's `beforeDrop`). */
  async announceProjectRemoved(ref: string): Promise<void> {
    for (const l of [...this.listeners]) await l.projectRemoved(ref);
  }
}
