/**
 * Whether a node-postgres client is inside a transaction block. node-postgres has no public API
 * for it: it tracks the ReadyForQuery status byte in the private `_txStatus` field ('I' idle,
 * 'T' in a transaction, 'E' in a failed one). This file is the only place that reads it.
 */
import type pg from 'pg';

export function inTransaction(client: pg.ClientBase): boolean {
  const s = (client as unknown as { _txStatus?: string })._txStatus;
  return s === 'T' || s === 'E';
}
