/**
 * The recent commits of one project database, retained in memory while its change feed runs, so
 * that a change stream can resume after a cursor: at most `maxRows` row changes and none older
 * than `maxAgeMs` (the oldest commits go first). A cursor names one row change: the buffer's
 * epoch (a new one each time the feed starts on this node, so a cursor from before it, or from
 * another node, is refused), its commit's LSN and its index in the commit.
 */
import { randomBytes } from 'node:crypto';
import type { Commit } from './change-feed.js';
import type { RowChange } from './test-decoding.js';

export interface BufferedCommit {
  lsn: bigint;
  /** When it arrived (ms). */
  at: number;
  tables: ReadonlySet<string>;
  /** Absent when the feed did not report its rows (too many, or a line it could not read). */
  changes?: RowChange[];
  anyTable?: boolean;
}

export interface Position {
  lsn: bigint;
  /** The change's index in its commit. */
  index: number;
}

export const CURSOR_TOO_OLD_MESSAGE =
  'The cursor is too old: the changes after it are no longer retained; subscribe without after and reload';

/** The most characters a cursor may have (longer is malformed). */
const MAX_CURSOR = 100;

export function encodeCursor(epoch: string, p: Position): string {
  return Buffer.from(`${epoch}.${p.lsn.toString(16)}.${p.index}`, 'utf8').toString('base64url');
}

/** A cursor's parts, or undefined when it is not one this server writes. */
export function decodeCursor(cursor: string): { epoch: string; position: Position } | undefined {
  if (cursor.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const m = /^([A-Za-z0-9_-]{8})\.([0-9a-f]{1,16})\.(\d{1,6})$/.exec(
    Buffer.from(cursor, 'base64url').toString('utf8'),
  );
  if (!m) return undefined;
  return { epoch: m[1] as string, position: { lsn: BigInt(`0x${m[2]}`), index: Number(m[3]) } };
}

export class ChangeBuffer {
  /** Names this run of the feed on this node (in every cursor). */
  readonly epoch = randomBytes(6).toString('base64url');
  private readonly commits: BufferedCommit[] = [];
  private first = 0;
  private rows = 0;
  /** Every commit up to this LSN is gone (0: none yet). */
  private evicted = 0n;

  constructor(
    private readonly maxRows: number,
    private readonly maxAgeMs: number,
  ) {}

  /** Retains a commit the feed reported; returns it as retained. */
  push(c: Commit, now = Date.now()): BufferedCommit {
    const b: BufferedCommit = { lsn: c.lsn, at: now, tables: c.tables };
    if (c.changes) b.changes = c.changes;
    if (c.anyTable) b.anyTable = true;
    this.commits.push(b);
    this.rows += sizeOf(b);
    this.trim(now);
    return b;
  }

  /** Drops what is over the bounds. */
  trim(now = Date.now()): void {
    while (this.first < this.commits.length) {
      const oldest = this.commits[this.first] as BufferedCommit;
      if (this.rows <= this.maxRows && now - oldest.at <= this.maxAgeMs) break;
      this.rows -= sizeOf(oldest);
      this.evicted = oldest.lsn;
      this.first++;
    }
    if (this.first > 1024 && this.first * 2 > this.commits.length) {
      this.commits.splice(0, this.first);
      this.first = 0;
    }
  }

  /**
   * The retained commits after `cursor`'s commit (its own included: the caller skips the changes up
   * to its index) up to `upTo`; undefined when the cursor is malformed, of another epoch, or older
   * than what is retained.
   */
  after(cursor: string, upTo: bigint): { position: Position; commits: BufferedCommit[] } | undefined {
    this.trim();
    const c = decodeCursor(cursor);
    if (!c || c.epoch !== this.epoch) return undefined;
    const { position } = c;
    if (position.lsn <= this.evicted || position.lsn > upTo) return undefined;
    const commits: BufferedCommit[] = [];
    for (let i = this.first; i < this.commits.length; i++) {
      const b = this.commits[i] as BufferedCommit;
      if (b.lsn > upTo) break;
      if (b.lsn >= position.lsn) commits.push(b);
    }
    if (commits[0]?.lsn !== position.lsn) return undefined;
    return { position, commits };
  }
}

function sizeOf(b: BufferedCommit): number {
  return Math.max(1, b.changes?.length ?? 0);
}
