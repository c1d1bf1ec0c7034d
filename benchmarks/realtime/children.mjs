// The bench's child processes: fork, ask and wait for an answer, stop (killed when they do not stop).
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
/** Every child started, stopped by stopAll(). */
const started = new Set();

/** Forks `file` of this folder (IPC with structured clone: typed arrays pass as they are). */
export function forkChild(file, env = {}) {
  const child = fork(join(here, file), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
    // BENCH_RT_PROF_DIR: the server writes a V8 CPU profile (.cpuprofile) there when it stops.
    execArgv:
      file === 'server.mjs' && process.env.BENCH_RT_PROF_DIR
        ? [...process.execArgv, '--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_RT_PROF_DIR}`]
        : process.execArgv,
  });
  started.add(child);
  child.once('exit', () => started.delete(child));
  return child;
}

/** Resolves with the child's next message of `type` (after sending `msg` when given); rejects when it exits first. */
export function ask(child, msg, type, onOther) {
  return new Promise((resolve, reject) => {
    const onMessage = (m) => {
      if (m && m.type === type) {
        cleanup();
        resolve(m);
      } else onOther?.(m);
    };
    const onExit = (code, signal) => {
      cleanup();
      reject(new Error(`${child.spawnargs.at(-1)} exited (${signal ?? code}) before answering ${type}`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    if (msg !== undefined) child.send(msg);
  });
}

/** The first message a child sends (the server's address and keys). */
export function firstMessage(child) {
  return new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code, signal) =>
      reject(new Error(`${child.spawnargs.at(-1)} exited (${signal ?? code})`)),
    );
  });
}

/** Asks a child to stop (`stop`, as a string or {cmd}); kills it if it has not exited `ms` later. */
/** @param {any} child @param {unknown} [msg] @param {number} [ms] */
export function stopChild(child, msg = { cmd: 'stop' }, ms = 20_000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    try {
      child.send(msg);
    } catch {
      child.kill('SIGTERM');
    }
  });
}

/** Stops every child still running, the server (`last`) after the others. */
export async function stopAll(last) {
  const others = [...started].filter((c) => c !== last);
  await Promise.all(others.map((c) => stopChild(c)));
  if (last) await stopChild(last, 'stop', 30_000);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
