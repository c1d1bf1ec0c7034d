/**
 * One Strata per data folder: `<dataDir>/strata.lock` records the owning process (pid and start
 * time, so a reused pid is not taken for the owner) and the URL it serves. It is created with
 * O_EXCL, so of two starts exactly one wins; a lock whose owner is gone is taken over under a
 * short-lived guard file (also O_EXCL), so two starts racing on a stale lock cannot both win.
 */
import { closeSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { processStartTime, sameProcessAlive } from '../db/pid.js';

export interface LockOwner {
  pid: number;
  /** Start time of the owner in clock ticks since boot (Linux); absent where unknown. */
  start_time?: string;
  /** The owner's HTTP URL; absent while it is still starting. */
  url?: string;
  started_at: string;
}

export class InstanceRunningError extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: LockOwner,
  ) {
    super(
      owner.url
        ? `Strata is already running in ${dataDir} at ${owner.url} (pid ${owner.pid}). Stop it first (Ctrl-C in its terminal, or kill ${owner.pid}), or use another --data-dir.`
        : `Strata is already starting in ${dataDir} (pid ${owner.pid}). Wait for it, or stop it first (kill ${owner.pid}), or use another --data-dir.`,
    );
    this.name = 'InstanceRunningError';
  }
}

export const lockFile = (dataDir: string) => join(dataDir, 'strata.lock');
const guardFile = (dataDir: string) => join(dataDir, 'strata.lock.takeover');

function readOwner(file: string): LockOwner | undefined {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockOwner>;
    if (typeof v.pid !== 'number' || !Number.isInteger(v.pid)) return undefined;
    return v as LockOwner;
  } catch {
    return undefined;
  }
}

const ownerAlive = (o: LockOwner | undefined): o is LockOwner =>
  !!o && o.pid !== process.pid && sameProcessAlive(o.pid, o.start_time);

/** The live Strata owning `dataDir`, if any. */
export function runningInstance(dataDir: string): LockOwner | undefined {
  const o = readOwner(lockFile(dataDir));
  return o && sameProcessAlive(o.pid, o.start_time) ? o : undefined;
}

/** Creates `file` only if it does not exist; false when it does. */
function createExclusive(file: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

export class InstanceLock {
  private released = false;
  private constructor(
    readonly dataDir: string,
    private owner: LockOwner,
  ) {}

  /** Takes the lock on `dataDir` or throws InstanceRunningError naming the running owner. */
  static acquire(dataDir: string): InstanceLock {
    const self: LockOwner = {
      pid: process.pid,
      start_time: processStartTime(process.pid),
      started_at: new Date().toISOString(),
    };
    const content = `${JSON.stringify(self)}\n`;
    const file = lockFile(dataDir);
    for (let attempt = 0; attempt < 20; attempt++) {
      if (createExclusive(file, content)) return new InstanceLock(dataDir, self);
      const owner = readOwner(file);
      if (ownerAlive(owner)) throw new InstanceRunningError(dataDir, owner);
      // A half-written lock (owner crashed while writing, or is writing now) reads as undefined:
      // give a live writer a moment before treating it as stale.
      if (!owner && attempt < 3) {
        sleepSync(50);
        continue;
      }
      takeOverStale(dataDir, owner);
    }
    throw new Error(`could not take the lock ${file}`);
  }

  /** Records the URL the owner serves (read by a second start and by `strata status`). */
  setUrl(url: string): void {
    if (this.released) return;
    this.owner = { ...this.owner, url };
    const file = lockFile(this.dataDir);
    writeFileSync(`${file}.${process.pid}.tmp`, `${JSON.stringify(this.owner)}\n`, { mode: 0o600 });
    renameSync(`${file}.${process.pid}.tmp`, file);
  }

  /** Removes the lock if it is still ours. Synchronous, so it can run in an 'exit' handler. */
  unlock(): void {
    if (this.released) return;
    this.released = true;
    const o = readOwner(lockFile(this.dataDir));
    if (o?.pid === process.pid && o.start_time === this.owner.start_time)
      rmSync(lockFile(this.dataDir), { force: true });
  }
}

/** Removes a stale lock, holding the guard so that a racing start cannot remove a fresh one. */
function takeOverStale(dataDir: string, seen: LockOwner | undefined): void {
  const guard = guardFile(dataDir);
  const me = `${JSON.stringify({ pid: process.pid, start_time: processStartTime(process.pid) })}\n`;
  if (!createExclusive(guard, me)) {
    const holder = readOwner(guard);
    if (ownerAlive(holder)) {
      sleepSync(50); // another start is taking over right now; look again
      return;
    }
    rmSync(guard, { force: true });
    return;
  }
  try {
    const now = readOwner(lockFile(dataDir));
    // Only the lock we judged stale is removed, never one written since.
    if (JSON.stringify(now) === JSON.stringify(seen) && !ownerAlive(now))
      rmSync(lockFile(dataDir), { force: true });
  } finally {
    rmSync(guard, { force: true });
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
