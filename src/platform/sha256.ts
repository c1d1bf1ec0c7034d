import { createHash } from 'node:crypto';

/** Hex SHA-256 of a text (access tokens and secrets are stored and compared as their digest). */
export function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}
