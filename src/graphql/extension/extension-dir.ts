/** Where the server reads extension files from, when this process can write there. */
import { accessSync, constants, existsSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return existsSync(dir);
  } catch {
    return false;
  }
}

/**
 * The server's `SHAREDIR/extension` when it exists and is writable here (pg_config needs a
 * superuser). A path that merely exists here may belong to another machine's server: the caller
 * confirms with pg_available_extensions after writing.
 */
export async function serverExtensionDir(client: pg.ClientBase): Promise<string | undefined> {
  let sharedir: string | undefined;
  try {
    sharedir = (
      await client.query<{ setting: string }>(`select setting from pg_config where name = 'SHAREDIR'`)
    ).rows[0]?.setting;
  } catch {
    return undefined;
  }
  if (!sharedir) return undefined;
  const dir = join(sharedir, 'extension');
  return writable(dir) ? dir : undefined;
}

export function isWritableDir(dir: string): boolean {
  return writable(dir);
}
