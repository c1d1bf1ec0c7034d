#!/usr/bin/env node
// Runs the pg_graphql conformance cases in test/conformance/ against dist/graphql/engine.js.
// Uses DATABASE_URL when set; otherwise starts an embedded PostgreSQL in a temporary folder.
// Arguments after `--` (or any arguments) are passed to the runner: --cases DIR, --only a,b, --json FILE, --verbose, --jobs N.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const runner = join(root, 'test', 'conformance', 'runner.mjs');
const engine = join(root, 'dist', 'graphql', 'engine.js');

const argv = process.argv.slice(2);
const passThrough =
  argv[0] === '--' ? argv.slice(1) : argv.filter((a, i) => !(a === '--' && i === argv.indexOf('--')));

if (!existsSync(runner)) {
  console.error(`conformance runner not found at ${runner}`);
  process.exit(2);
}
if (!existsSync(engine)) {
  console.error(`${engine} is missing: run npm run build first`);
  process.exit(2);
}

let embedded;
let dir;
let url = process.env.DATABASE_URL;
const cleanup = async () => {
  if (embedded) await embedded.stop().catch(() => {});
  embedded = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
};

if (!url) {
  const { startEmbedded } = await import(join(root, 'dist', 'db', 'embedded.js'));
  dir = mkdtempSync(join(tmpdir(), 'strata-conformance-pg-'));
  console.error(`starting embedded PostgreSQL in ${dir}`);
  embedded = await startEmbedded({ dataDir: join(dir, 'db'), port: 0, password: 'postgres' });
  url = embedded.superuserUrl('postgres');
}

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, async () => {
    await cleanup();
    process.exit(130);
  });
}

const child = spawn(
  process.execPath,
  [runner, '--engine', engine, '--database-url', String(url), ...passThrough],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
const code = await new Promise((res) => child.on('exit', (c, s) => res(c ?? (s ? 1 : 0))));
await cleanup();
process.exit(code);
