/** Where the console's built frontend is: dist/console/app (scripts/build-console.mjs writes it). */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// This module is src/console/assets.ts or its build dist/console/assets.js: two levels below the root.
export const CONSOLE_APP_DIR = fileURLToPath(new URL('../../dist/console/app/', import.meta.url));

export function consoleIsBuilt(): boolean {
  return existsSync(`${CONSOLE_APP_DIR}index.html`);
}
