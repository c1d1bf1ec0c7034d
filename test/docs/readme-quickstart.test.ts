/**
 * The README's "Five minutes with it", run literally: `npm start`'s banner, then each `sh` block of
 * that section through bash in the project folder (only the port is changed, so that the test does
 * not take 54321), against a `strata start` child with its own data folder.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeTestPort } from '../support/free-port.js';
import { type CliProcess, repoRoot as root, servingBanner, spawnCli } from '../support/strata-process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'strata-readme-'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  DATABASE_URL: '',
  STRATA_DATA_DIR: dataDir,
  // Other test files may hold the router's and the console's default ports.
  STRATA_POOLER_PORT: 'off',
  STRATA_CONSOLE_PORT: '0',
};
let child: ChildProcess | undefined;
let cli: CliProcess | undefined;
/** What `strata start` printed so far. */
const banner = () => cli?.output() ?? '';
let port = 0;

/** The `sh` code blocks of one README section, in order. */
function shellBlocks(section: string): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf(`## ${section}`);
  expect(start).toBeGreaterThanOrEqual(0);
  const next = readme.indexOf('\n## ', start + 3);
  const text = readme.slice(start, next < 0 ? undefined : next);
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    (m[1] ?? '')
      .split('\n')
      .map((l) => l.replace(/^ {3}/, ''))
      .join('\n'),
  );
}

function bash(script: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-eo', 'pipefail', '-c', script],
      { cwd: root, env, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

beforeAll(async () => {
  port = await freeTestPort();
  env.STRATA_PORT = String(port);
  cli = spawnCli(['start'], { env, cwd: root });
  child = cli.child;
  await servingBanner(cli, { timeoutMs: 90_000 });
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child?.once('exit', r));
    child.kill('SIGINT');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('README: five minutes with it', () => {
  it('the banner shows every line the README shows', () => {
    for (const label of [
      'API URL:',
      'GraphQL URL:',
      'Storage URL:',
      'Management URL:',
      'DB URL:',
      'Project URL:',
      'JWT secret:',
      'anon key:',
      'service_role key:',
      'Access token:',
      'Console URL:',
    ])
      expect(banner()).toContain(label);
    expect(banner()).toMatch(new RegExp(`Project URL: http://127\\.0\\.0\\.1:${port}/project/[a-z]{20}`));
  });

  it('the Project URL works from Node (fetch), unlike <ref>.localhost', async () => {
    const projectUrl = /Project URL: (\S+)/.exec(banner())?.[1] ?? '';
    const anon = /anon key: (\S+)/.exec(banner())?.[1] ?? '';
    const res = await fetch(`${projectUrl}/graphql/v1`, {
      method: 'POST',
      headers: { apikey: anon, 'content-type': 'application/json' },
      body: '{"query":"{ __typename }"}',
    });
    expect(await res.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('runs each shell block of the section as written (only the port changed)', async () => {
    const blocks = shellBlocks('Five minutes with it');
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    const outputs: string[] = [];
    for (const block of blocks) {
      const r = await bash(block.replaceAll('54321', String(port)));
      expect(r.code, r.out).toBe(0);
      outputs.push(r.out);
    }
    // curl prints the two answers back to back.
    const [inserted, read] = (outputs.at(-1) ?? '')
      .trim()
      .split(/(?<=\})\s*(?=\{"data")/)
      .map((t) => JSON.parse(t));
    expect(inserted).toEqual({
      data: { insertIntotodosCollection: { records: [{ id: '1', title: 'hi' }] } },
    });
    expect(read).toEqual({ data: { todosCollection: { edges: [{ node: { id: '1', title: 'hi' } }] } } });
  });
});
