// Retakes the console's screenshots in docs/console/ (README "Web console"): runs the console's
// browser test with STRATA_CONSOLE_SCREENSHOTS pointing there. Usage: node scripts/console-screenshots.mjs
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = join(root, 'docs', 'console');
mkdirSync(dir, { recursive: true });
execFileSync(process.execPath, ['scripts/build-if-needed.mjs'], { cwd: root, stdio: 'inherit' });
execFileSync(
  process.execPath,
  [
    'node_modules/vitest/vitest.mjs',
    'run',
    'test/console/console.test.ts',
    'test/console/functions-page.test.ts',
    'test/console/table-structure.test.ts',
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, STRATA_CONSOLE_SCREENSHOTS: dir },
  },
);
process.stderr.write(`console screenshots written to ${dir}\n`);
