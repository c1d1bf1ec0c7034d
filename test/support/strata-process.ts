/**
 * The CLI as a child process, as a user runs it (`strata start`, `strata serve`): its output
 * collected, and a wait for the "Press Ctrl-C to stop" banner that it prints once it serves.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { eventually } from './eventually.js';

export const repoRoot = new URL('../../', import.meta.url).pathname;
/** The CLI's entry (it runs from dist/: scripts/build-if-needed.mjs builds it). */
export const strataBin = join(repoRoot, 'bin', 'strata.js');

export interface CliProcess {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved as they arrived. */
  output(): string;
  /** The exit code (null: ended by a signal). */
  exited: Promise<number | null>;
}

/** Spawns `node bin/strata.js …args` (or `command …args`) with its output collected. */
export function spawnCli(
  args: string[],
  opts: { env: NodeJS.ProcessEnv; cwd?: string; command?: string },
): CliProcess {
  const child = spawn(opts.command ?? process.execPath, opts.command ? args : [strataBin, ...args], {
    env: opts.env,
    cwd: opts.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/**
 * Waits until `p` printed the banner that it serves; its output then. Throws with the output when
 * it ends first, or after `timeoutMs` (having killed it). `name` starts the error messages.
 */
export async function servingBanner(
  p: CliProcess,
  { timeoutMs, name = 'strata start' }: { timeoutMs: number; name?: string },
): Promise<string> {
  const ended = () => p.child.exitCode !== null || p.child.signalCode !== null;
  const state = await eventually(
    () => (p.output().includes('Press Ctrl-C to stop') ? 'serving' : ended() ? 'ended' : false),
    { timeoutMs, intervalMs: 100 },
  ).catch(() => 'late' as const);
  if (state === 'ended') throw new Error(`${name} exited: ${p.output()}`);
  if (state === 'late') {
    p.child.kill('SIGKILL');
    throw new Error(`${name} not started within ${timeoutMs / 1000} s: ${p.output()}`);
  }
  return p.output();
}
