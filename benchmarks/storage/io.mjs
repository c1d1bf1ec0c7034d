// Helpers of the storage bench (run.mjs): test files, HTTP transfers, commands, timing, RSS samples,
// and the CPU time a child process reports for itself.
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { request } from 'node:http';

export const MiB = 1024 * 1024;

/** Writes `size` bytes of a fixed non-zero pattern to `path`. */
export function makeFile(path, size) {
  const chunk = Buffer.alloc(MiB);
  for (let i = 0; i < chunk.length; i += 4) chunk.writeUInt32LE((i * 2654435761) >>> 0, i);
  const out = createWriteStream(path);
  return new Promise((resolve, reject) => {
    let left = size;
    const write = () => {
      while (left > 0) {
        const n = Math.min(chunk.length, left);
        left -= n;
        if (!out.write(n === chunk.length ? chunk : chunk.subarray(0, n)))
          return void out.once('drain', write);
      }
      out.end(resolve);
    };
    out.on('error', reject);
    write();
  });
}

function rssOf(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * One HTTP exchange with a target (`base.url` + path, with `base.headers`); resolves with the
 * number of body bytes received, rejects on a status >= 300.
 * @param {{ url: string, headers: Record<string, string> }} base
 * @param {string} method
 * @param {string} path
 * @param {{ body?: { pipe: (dest: import('node:http').ClientRequest) => unknown }, size?: number, headers?: Record<string, string> }} [opts]
 * @returns {Promise<number>}
 */
export function http(base, method, path, opts = {}) {
  const { body, size, headers = {} } = opts;
  const url = new URL(base.url + path);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: {
          ...base.headers,
          ...headers,
          ...(size !== undefined ? { 'content-length': String(size) } : {}),
        },
      },
      (res) => {
        let bytes = 0;
        const chunks = [];
        res.on('data', (c) => {
          bytes += c.length;
          if (chunks.length < 4) chunks.push(c);
        });
        res.on('end', () =>
          (res.statusCode ?? 500) >= 300
            ? reject(new Error(`${method} ${url}: ${res.statusCode} ${Buffer.concat(chunks).toString()}`))
            : resolve(bytes),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body) body.pipe(req);
    else req.end();
  });
}

/** A body of one string, for `http`. */
export function bufferStream(s) {
  return { pipe: (req) => req.end(s) };
}

/** Seconds `fn` took. */
export async function time(fn) {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
}

/** Runs a command to completion (stdio ignored); rejects on a non-zero exit. */
export function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: 'ignore' });
    p.on('error', reject);
    p.on('exit', (code) =>
      code === 0 ? resolve(undefined) : reject(new Error(`${cmd} exited with ${code}`)),
    );
  });
}

/** Runs a command and drains its stdout; resolves with the byte count. */
export function drain(cmd, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let bytes = 0;
    p.stdout.on('data', (c) => (bytes += c.length));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(bytes) : reject(new Error(`${cmd} exited with ${code}`))));
  });
}

/** Samples a process's RSS every 20 ms, keeping the peak per phase (upload / download). */
export function sampleRss(pid) {
  const peaks = { baseline: rssOf(pid), upload: 0, download: 0 };
  let phase = 'idle';
  const take = () => {
    if (phase !== 'idle') peaks[phase] = Math.max(peaks[phase], rssOf(pid));
  };
  const t = setInterval(take, 20);
  return {
    /** @param {'idle' | 'upload' | 'download'} p */
    phase(p) {
      take();
      phase = p;
    },
    stop() {
      clearInterval(t);
      return peaks;
    },
  };
}

/**
 * The CPU microseconds a child (server.mjs, node-floor.mjs) reports for itself: all threads
 * (`cpu`), of which in the kernel (`sys`), and its event loop's busy time (`loop`).
 * @returns {Promise<{ cpu: number, sys: number, loop: number }>}
 */
export function childCpu(child) {
  return new Promise((resolve) => {
    const on = (m) => {
      if (m && typeof m === 'object' && 'cpu' in m) {
        child.off('message', on);
        resolve(m);
      }
    };
    child.on('message', on);
    child.send('cpu');
  });
}
