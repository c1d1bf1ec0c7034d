// Rebuilds dist/ when any file under src/ (or tsconfig.json) is newer than the last build, after
// regenerating the SQL copied from a single source (generate-engine-sql.mjs; cheap, every run), and
// the web console (dist/console/app, scripts/build-console.mjs) when a file under console/ is, and
// the function template's Deno packages (dist/deno-seed, scripts/seed-deno-cache.mjs) when missing.
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildConsole } from './build-console.mjs';
import { generateEngineSql } from './generate-engine-sql.mjs';
import { seedDenoCache } from './seed-deno-cache.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.build-stamp');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

generateEngineSql();

const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const changed = Math.max(newest(join(root, 'src')), statSync(join(root, 'tsconfig.json')).mtimeMs);
const force = process.argv.includes('--force');
if (force || changed > built) {
  const t0 = Date.now();
  // Forced: everything is emitted again (tsc's incremental state would skip a dist file removed or
  // edited since the last build, its source being unchanged).
  if (force) rmSync(join(root, 'dist', '.tsbuildinfo'), { force: true });
  process.stderr.write(
    `strata: compiling TypeScript to dist/ (${built ? 'sources changed' : 'first run'}) …\n`,
  );
  execSync(
    'node node_modules/typescript/bin/tsc -p tsconfig.json --incremental --tsBuildInfoFile dist/.tsbuildinfo',
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  process.stderr.write(`strata: compiled in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(stamp, String(Date.now()));
}

const consoleStamp = join(root, 'dist', 'console', 'app', 'index.html');
const consoleBuilt = existsSync(consoleStamp) ? statSync(consoleStamp).mtimeMs : 0;
const consoleChanged = Math.max(
  newest(join(root, 'console')),
  statSync(join(root, 'scripts', 'build-console.mjs')).mtimeMs,
);
if (force || consoleChanged > consoleBuilt) {
  const t0 = Date.now();
  process.stderr.write('strata: bundling the web console to dist/console/app …\n');
  await buildConsole();
  process.stderr.write(`strata: console bundled in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}

await seedDenoCache(root);
