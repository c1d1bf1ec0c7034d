/**
 * What changed in a database, from PostgreSQL's logical replication (through pg-logical-replication)
 * on a slot of this node's own: `onCommit` is called after each transaction that inserted,
 * updated, deleted or truncated rows, with its LSN, the tables it changed and its row changes
 * (test-decoding.ts reads them). Needs `wal_level = logical` (the embedded server sets it:
 * db/embedded.ts) and a role that may replicate (the project's superuser URL); otherwise start()
 * says why and the live queries poll. Like every platform superuser session in a project database,
 * its sessions resolve names in pg_catalog only (db/superuser-session.ts): a tenant's
 * `public.starts_with(name, text)` must never be a better match than pg_catalog's.
 *
 * The output plugin is test_decoding (shipped with PostgreSQL), not pgoutput: pgoutput streams
 * only a publication's tables, and a publication of all tables that publishes UPDATE and DELETE
 * makes PostgreSQL refuse those on every table without a replica identity (no primary key) — a
 * change to what users' writes may do. test_decoding needs no publication and changes nothing for
 * writers. Its rows carry the new tuple of an INSERT/UPDATE and the old key of a DELETE (and of an
UPDATE that changed the key), as text.
 *
 * The slot is dropped on close(). A slot left by a node that died (inactive, named
 * `strata_rt_…`) is dropped by the next feed started on that database, so WAL is not retained
 * for it forever.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { CATALOG_ONLY_OPTIONS, withSuperuserSession as withClient } from '../db/superuser-session.js';
import { LogicalReplicationService, TestDecodingPlugin } from 'pg-logical-replication';
import { parseChangeLine, type RowChange } from './test-decoding.js';

const SLOT_PREFIX = 'strata_rt_';
const START_TIMEOUT_MS = 10_000;

export interface ChangeFeed {
  close(): Promise<void>;
}

/** More row changes than this in one transaction: only its tables are reported, not its rows. */
export const MAX_ROWS_PER_COMMIT = 10_000;

/** One committed transaction that changed rows. */
export interface Commit {
  /** The commit record's LSN as a number: increasing, one per commit. */
  lsn: bigint;
  /** tableKey(schema, table) of every table it changed rows of. */
  tables: ReadonlySet<string>;
  /**
   * Its row changes in order; absent when there were more than MAX_ROWS_PER_COMMIT or a line
   * could not be read.
   */
  changes?: RowChange[];
  /** A line could not be read: any table may have changed (`tables` may be incomplete). */
  anyTable?: boolean;
  /** Its transaction id (32 bits, as test_decoding prints it), when the COMMIT line gave it. */
  xid?: number;
}

/** The key of a table in Commit.tables. */
export function tableKey(schema: string, table: string): string {
  return JSON.stringify([schema, table]);
}

/** `X/Y` (hex halves, as PostgreSQL prints an LSN) → a number. */
export function lsnOf(text: string): bigint {
  const [hi = '0', lo = '0'] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

/** test_decoding's lines as they come (the package's own parser splits every row into values). */
class CommitLines extends TestDecodingPlugin {
  override parse(buffer: Buffer): string {
    return buffer.toString('utf8');
  }
}

/** This node's slot (after dropping stale ones); its name. */
async function prepare(url: string): Promise<string> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ wal_level: string }>(
      'select pg_catalog.current_setting($1) as wal_level',
      ['wal_level'],
    );
    if (rows[0]?.wal_level !== 'logical')
      throw new Error(`wal_level is ${rows[0]?.wal_level ?? 'unknown'}, not logical`);
    const { rows: stale } = await c.query<{ slot_name: string }>(
      `select slot_name from pg_catalog.pg_replication_slots
        where pg_catalog.starts_with(slot_name::text, $1) and database = pg_catalog.current_database()
          and not active`,
      [SLOT_PREFIX],
    );
    // One by one: a slot another feed is dropping at the same moment is gone, not an error.
    for (const { slot_name } of stale)
      await c.query('select pg_catalog.pg_drop_replication_slot($1)', [slot_name]).catch(() => {});
    const slot = `${SLOT_PREFIX}${randomBytes(8).toString('hex')}`;
    await c.query(`select pg_catalog.pg_create_logical_replication_slot($1, 'test_decoding')`, [slot]);
    return slot;
  });
}

async function dropSlot(url: string, slot: string): Promise<void> {
  await withClient(url, async (c) => {
    // The walsender may take a moment to let go of the slot after the stream stopped.
    for (let attempt = 0; attempt < 50; attempt++) {
      const { rows } = await c.query<{ active_pid: number | null }>(
        'select active_pid from pg_catalog.pg_replication_slots where slot_name = $1',
        [slot],
      );
      const row = rows[0];
      if (!row) return;
      if (row.active_pid === null) {
        await c.query('select pg_catalog.pg_drop_replication_slot($1)', [slot]).catch(() => {});
        continue;
      }
      await c.query('select pg_catalog.pg_terminate_backend($1)', [row.active_pid]).catch(() => {});
      await new Promise((r) => setTimeout(r, 100));
    }
  });
}

/** Starts the feed; rejects (with the reason) when the database does not allow it. */
export async function startChangeFeed(
  url: string,
  onCommit: (commit: Commit) => void,
  onFailure: (err: Error) => void,
): Promise<ChangeFeed> {
  const slot = await prepare(url);
  const service = new LogicalReplicationService(
    { connectionString: url, replication: 'database', options: CATALOG_ONLY_OPTIONS } as pg.ClientConfig,
    // Confirms the position once a second, not after each message (three per commit: each a
    // status update the WAL sender processes). The slot is this node's own and dropped on close;
    // nothing resumes from it, so a later confirmation only holds WAL a second longer.
    { acknowledge: { auto: false, timeoutSeconds: 1 } },
  );
  let closed = false;
  let tables = new Set<string>();
  let changes: RowChange[] | undefined = [];
  let anyTable = false;
  service.on('data', (lsn: string, line: unknown) => {
    if (typeof line !== 'string') return;
    if (line.startsWith('table ')) {
      let rows: RowChange[] | null = null;
      try {
        rows = parseChangeLine(line);
      } catch {
        // Not the format this reads: the commit is reported as touching any table.
      }
      if (!rows) {
        anyTable = true;
        changes = undefined;
        return;
      }
      for (const r of rows) tables.add(tableKey(r.schema, r.table));
      if (changes && changes.length + rows.length <= MAX_ROWS_PER_COMMIT) changes.push(...rows);
      else changes = undefined;
    } else if (line.startsWith('COMMIT')) {
      if (tables.size || anyTable) {
        const commit: Commit = { lsn: lsnOf(lsn), tables };
        if (changes) commit.changes = changes;
        if (anyTable) commit.anyTable = true;
        const xid = Number(line.slice('COMMIT '.length));
        if (Number.isInteger(xid) && xid > 0) commit.xid = xid;
        onCommit(commit);
      }
      tables = new Set();
      changes = [];
      anyTable = false;
    }
  });
  const started = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('logical replication did not start')), START_TIMEOUT_MS);
    service.once('start', () => {
      clearTimeout(timer);
      resolve();
    });
    service.on('error', (err: Error) => {
      clearTimeout(timer);
      reject(err);
      if (!closed) onFailure(err);
    });
  });
  // With xids: `COMMIT <xid>` (live-queries.ts checks that a refresh's snapshot sees the commit).
  const plugin = new CommitLines({ skipEmptyXacts: true, includeXids: true });
  service.subscribe(plugin, slot).catch((err: Error) => service.emit('error', err));
  const close = async () => {
    if (closed) return;
    closed = true;
    await service.stop().catch(() => {});
    await dropSlot(url, slot).catch(() => {});
  };
  try {
    await started;
  } catch (e) {
    await close();
    throw e;
  }
  return { close };
}
