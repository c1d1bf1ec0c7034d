/** Whether a node-postgres client is inside a transaction block (node-postgres' own status byte). */
import type pg from 'pg';

export function inTransaction(client: pg.ClientBase): boolean {
  const s = client.getTransactionStatus();
  return s === 'T' || s === 'E';
}
