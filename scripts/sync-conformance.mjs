#!/usr/bin/env node
// Copies the shared pg_graphql conformance set (../shared beside the checkout) into test/conformance/.
// `--check` only compares and exits 1 on a difference. See test/conformance/README.md.
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const shared = resolve(root, '..', 'shared');
const sharedCases = join(shared, 'conformance', 'pg_graphql');
const sharedRunner = join(shared, 'tools', 'pg-graphql-conformance.mjs');
const ours = join(root, 'test', 'conformance');
const check = process.argv.includes('--check');

// The one edit: the runner's default cases folder is `cases/` beside it.
const DEFAULT_CASES_LINE =
  "const DEFAULT_CASES_DIR = path.join(path.dirname(RUNNER_PATH), '..', 'conformance', 'pg_graphql');";
const OUR_CASES_LINE = "const DEFAULT_CASES_DIR = path.join(path.dirname(RUNNER_PATH), 'cases');";

if (!existsSync(sharedCases) || !existsSync(sharedRunner)) {
  console.error(`no shared conformance set at ${shared}`);
  process.exit(2);
}
const runnerText = readFileSync(sharedRunner, 'utf8').replace(DEFAULT_CASES_LINE, OUR_CASES_LINE);

function differences() {
  const out = [];
  const runnerPath = join(ours, 'runner.mjs');
  if (!existsSync(runnerPath) || readFileSync(runnerPath, 'utf8') !== runnerText) out.push('runner.mjs');
  const a = readdirSync(sharedCases).sort();
  const b = existsSync(join(ours, 'cases')) ? readdirSync(join(ours, 'cases')).sort() : [];
  for (const f of new Set([...a, ...b])) {
    const p = join(sharedCases, f);
    const q = join(ours, 'cases', f);
    if (!existsSync(p) || !existsSync(q) || !readFileSync(p).equals(readFileSync(q))) out.push(`cases/${f}`);
  }
  return out;
}

const diff = differences();
if (check) {
  if (diff.length) console.error(`conformance set differs from the shared one: ${diff.join(', ')}`);
  else console.log('conformance set matches the shared one');
  process.exit(diff.length ? 1 : 0);
}
rmSync(join(ours, 'cases'), { recursive: true, force: true });
cpSync(sharedCases, join(ours, 'cases'), { recursive: true });
writeFileSync(join(ours, 'runner.mjs'), runnerText);
console.log(diff.length ? `updated: ${diff.join(', ')}` : 'already in sync');
