// Installs the comparison engines (this folder's package-lock.json) on first use, quietly: they are
// benchmark-only, so the project's own `npm ci` stays free of their Node >= 22 engine warnings.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));

export function ensureComparators(log = console.error) {
  if (existsSync(`${here}node_modules/postgraphile/package.json`)) return;
  log('installing the comparison engines (benchmarks/graphql/comparators, once)');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  execFileSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error', '--engine-strict=false'], {
    cwd: here,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}
