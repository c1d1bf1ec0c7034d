import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The package's sql/ folder (same relative place from src/ and dist/). */
export const SQL_DIR = fileURLToPath(new URL('../../sql/', import.meta.url));

export function sqlPath(...parts: string[]): string {
  return join(SQL_DIR, ...parts);
}
