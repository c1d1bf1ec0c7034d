/**
 * A change stream's events for a run of commits (change-streams.ts runs it per group and batch,
 * and per resume): the table's row changes, each matched with the record the subscriber may see
 * now — fetched in one engine request as them (change-request.ts) — and with whether the row was
 * delivered to them before.
 */
import type pg from 'pg';
import type { Principal } from '../db/with-role.js';
import { resolveWithPoolText } from '../graphql/engine.js';
import { nodeIdOfText } from '../graphql/introspect/change-streams.js';
import { encodeCursor, type BufferedCommit, type Position } from './change-buffer.js';
import { tableKey, type Commit } from './change-feed.js';
import { NODE_ID_ALIAS, type ChangeOp, type ChangeRequest } from './change-request.js';
import type { LiveResult } from './subscriber.js';
import type { RowChange, RowValues } from './test-decoding.js';

export const TOO_LARGE_MESSAGE =
  'The change set was too large to stream (a transaction changed more rows than the feed reports one by one, or truncated the table): subscribe again without after and reload';

/** Most collection fields in one fetch request. */
const MAX_FIELDS = 50;

/** One row change of a subscribed table, with its cursor position. */
interface Item {
  position: Position;
  op: ChangeOp;
  /** The row's node id now (INSERT/UPDATE: the new key; DELETE: the old). */
  nodeId: string;
  /** An UPDATE that changed the key: the old key's node id. */
  oldNodeId?: string;
}

export interface Outcome {
  events: { result: LiveResult; cursor: string }[];
  /** Node ids now delivered (true) or no longer (false). */
  delivered: Map<string, boolean>;
  end?: string;
}

/**
 * The events of `commits` (after `from`) for a group: its table's row changes, each matched with
 * the record the group's subscribers may see now.
 */
export async function eventsOf(
  pool: pg.Pool,
  g: { request: ChangeRequest; principal: Principal },
  commits: readonly BufferedCommit[],
  from: Position | undefined,
  before: ReadonlySet<string> | undefined,
  epoch: string,
): Promise<Outcome> {
  const table = g.request.table;
  const tk = tableKey(table.schema, table.sqlName);
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
      const fetched = await fetchRecords(pool, g.request, g.principal, keys).catch((e: Error) => ({
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
export async function fetchRecords(
  pool: pg.Pool,
  request: ChangeRequest,
  principal: Principal,
  keys: readonly string[],
  first?: number,
): Promise<{ records: Map<string, Record<string, unknown>> }> {
  const records = new Map<string, Record<string, unknown>>();
  // One request holds up to MAX_FIELDS collection fields of `maxRows` keys each (its documents
  // stay far below the engine's token budget); a larger batch takes several, one after another.
  const perRequest = Math.max(1, request.table.maxRows) * MAX_FIELDS;
  for (let at = 0; at === 0 || at < keys.length; at += perRequest) {
    const text = await resolveWithPoolText(
      pool,
      principal,
      request.fetch(keys.slice(at, at + perRequest), first),
    );
    const body = JSON.parse(text) as {
      data?: Record<string, { edges?: { node?: Record<string, unknown> }[] } | null> | null;
      errors?: { message?: string }[];
    };
    if (body.errors?.length) throw new Error(body.errors.map((e) => e.message).join('; '));
    for (const conn of Object.values(body.data ?? {}))
      for (const edge of conn?.edges ?? []) {
        const node = edge.node;
        if (!node) continue;
        const { [NODE_ID_ALIAS]: id, ...record } = node;
        if (typeof id === 'string') records.set(id, record);
      }
  }
  return { records };
}

/**
 * What the streams need of a commit: the row changes of tables with a change stream subscribed
 * to in this run of the feed (the only tables a cursor can name), their key columns only; a
 * commit reported without its rows when it may concern them. Undefined: nothing of theirs.
 */
export function relevantPart(c: Commit, keys: ReadonlyMap<string, readonly string[]>): Commit | undefined {
  if (!c.changes) {
    const tables = new Set([...c.tables].filter((t) => keys.has(t)));
    if (!c.anyTable && !tables.size) return undefined;
    return { lsn: c.lsn, tables, ...(c.anyTable ? { anyTable: true } : {}) };
  }
  const changes: RowChange[] = [];
  const tables = new Set<string>();
  for (const ch of c.changes) {
    const tk = tableKey(ch.schema, ch.table);
    const key = keys.get(tk);
    if (!key) continue;
    tables.add(tk);
    const slim: RowChange = { schema: ch.schema, table: ch.table, op: ch.op };
    if (ch.new) slim.new = pick(ch.new, key);
    if (ch.old) slim.old = pick(ch.old, key);
    changes.push(slim);
  }
  return changes.length ? { lsn: c.lsn, tables, changes } : undefined;
}

function pick(values: RowValues, columns: readonly string[]): RowValues {
  const out: RowValues = {};
  for (const c of columns) if (Object.hasOwn(values, c)) out[c] = values[c] as string | null;
  return out;
}
