// Storage API benchmark: upload/download throughput of 1 MiB, 64 MiB, 256 MiB and 1 GiB objects
// through the HTTP API, each compared (same run, same bytes, same disk) with its baseline:
// - upload vs `cp SRC DST && sync DST DIR`: the copy plus an fsync of that one file and of its folder,
//   which is exactly the durability an acknowledged upload has (the server fsyncs the object file
//   and the folder entry that publishes it). A bare `sync` would flush every dirty page of the
//   (shared) machine, and a copy without fsync would compare against writes still in the page cache.
// - download vs `cat SRC` from the page cache into a pipe this process drains, so both sides end in
//   the same kind of Node reader (the HTTP client drains a socket).
// and the server's peak RSS while each size streams up and down, and its CPU seconds per GiB moved
// (all threads, and the event loop's busy time alone), which the machine's load inflates far less
// than wall time. BENCH_QUICK=1 uses small sizes; BENCH_SIZES=64x3,256x1 picks sizes (MiB) x reps;
// BENCH_CPU_PROF=DIR profiles the server.
// BENCH_BACKEND=s3 stores the bytes in a local s3rver (in this process) instead of the file system.
// Prints a table and writes benchmarks/results/storage-<timestamp>.json.
import { fork, spawn } from 'node:child_process';
import {
  createReadStream,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const QUICK = process.env.BENCH_QUICK === '1';
const BACKEND = process.env.BENCH_BACKEND === 's3' ? 's3' : 'file';
const MiB = 1024 * 1024;
const SIZES = process.env.BENCH_SIZES
  ? process.env.BENCH_SIZES.split(',').map((spec) => {
      const [mib, reps = '1'] = spec.split('x');
      return { size: Number(mib) * 1024 * 1024, reps: Number(reps) };
    })
  : QUICK
    ? [
        { size: MiB, reps: 5 },
        { size: 16 * MiB, reps: 1 },
      ]
    : [
        { size: MiB, reps: 20 },
        { size: 64 * MiB, reps: 3 },
        { size: 256 * MiB, reps: 2 },
        { size: 1024 * MiB, reps: 1 },
      ];
const here = fileURLToPath(new URL('.', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'strata-bench-storage-'));

function makeFile(path, size) {
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
 * @param {{ url: string, serviceRoleKey: string }} server
 * @param {string} method
 * @param {string} path
 * @param {{ body?: { pipe: (dest: import('node:http').ClientRequest) => unknown }, size?: number, headers?: Record<string, string> }} [opts]
 * @returns {Promise<number>}
 */
function http(server, method, path, opts = {}) {
  const { body, size, headers = {} } = opts;
  const url = new URL(server.url + '/storage/v1' + path);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: {
          authorization: `Bearer ${server.serviceRoleKey}`,
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
            ? reject(new Error(`${method} ${path}: ${res.statusCode} ${Buffer.concat(chunks).toString()}`))
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

const time = async (fn) => {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
};

/** A local S3 (s3rver, a dev dependency) with the bench bucket, for BENCH_BACKEND=s3. */
async function startS3() {
  const require = createRequire(import.meta.url);
  const S3rver = require('s3rver');
  const s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: join(work, 's3'),
    allowMismatchedSignatures: true,
    configureBuckets: [{ name: 'strata-bench' }],
  });
  const { port } = await s3.run();
  return { endpoint: `http://127.0.0.1:${port}`, close: () => s3.close() };
}

async function main() {
  const dataDir = join(work, 'data');
  const s3 = BACKEND === 's3' ? await startS3() : undefined;
  const env = { ...process.env, BENCH_DATA_DIR: dataDir, ...(s3 ? { BENCH_S3_ENDPOINT: s3.endpoint } : {}) };
  // BENCH_CPU_PROF=DIR writes a V8 CPU profile of the server (node --cpu-prof) into DIR.
  const execArgv = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  const child = fork(join(here, 'server.mjs'), {
    env,
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const server = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  const results = {
    when: new Date().toISOString(),
    quick: QUICK,
    node: process.version,
    backend: BACKEND,
    /** @type {Record<string, number>[]} */
    sizes: [],
  };
  try {
    await http(server, 'POST', '/bucket', {
      headers: { 'content-type': 'application/json' },
      body: bufferStream('{"name":"bench"}'),
      size: 16,
    });
    for (const { size, reps } of SIZES) {
      const src = join(work, `src-${size}`);
      await makeFile(src, size);
      await run('sync', [src]);
      let copy = 0,
        cat = 0,
        up = 0,
        down = 0;
      const cpu = { up: 0, upSys: 0, upLoop: 0, down: 0, downSys: 0, downLoop: 0 };
      const rss = sampleRss(child.pid);
      for (let i = 0; i < reps; i++) {
        const dst = join(work, `copy-${size}-${i}`);
        copy += await time(() => run('sh', ['-c', 'cp "$1" "$2" && sync "$2" "$3"', 'sh', src, dst, work]));
        rmSync(dst);
        const key = `obj-${size}-${i}`;
        rss.phase('upload');
        let before = await serverCpu(child);
        up += await time(() =>
          http(server, 'POST', `/object/bench/${key}`, {
            body: createReadStream(src),
            size,
            headers: { 'content-type': 'application/octet-stream' },
          }),
        );
        let after = await serverCpu(child);
        cpu.up += after.cpu - before.cpu;
        cpu.upSys += after.sys - before.sys;
        cpu.upLoop += after.loop - before.loop;
        rss.phase('idle');
        cat += await time(async () => {
          const n = await drain('cat', [src]);
          if (n !== size) throw new Error(`cat read ${n} of ${size} bytes`);
        });
        rss.phase('download');
        before = await serverCpu(child);
        down += await time(async () => {
          const n = await http(server, 'GET', `/object/bench/${key}`);
          if (n !== size) throw new Error(`downloaded ${n} of ${size} bytes`);
        });
        after = await serverCpu(child);
        cpu.down += after.cpu - before.cpu;
        cpu.downSys += after.sys - before.sys;
        cpu.downLoop += after.loop - before.loop;
        rss.phase('idle');
        await http(server, 'DELETE', `/object/bench/${key}`);
      }
      const peaks = rss.stop();
      rmSync(src);
      const mbps = (t) => (size * reps) / MiB / t;
      results.sizes.push({
        size,
        reps,
        copySyncMiBps: mbps(copy),
        catMiBps: mbps(cat),
        uploadMiBps: mbps(up),
        downloadMiBps: mbps(down),
        uploadRatio: mbps(up) / mbps(copy),
        downloadRatio: mbps(down) / mbps(cat),
        uploadCpuSecPerGiB: perGiB(cpu.up, size * reps),
        uploadSysSecPerGiB: perGiB(cpu.upSys, size * reps),
        uploadLoopSecPerGiB: perGiB(cpu.upLoop, size * reps),
        downloadCpuSecPerGiB: perGiB(cpu.down, size * reps),
        downloadSysSecPerGiB: perGiB(cpu.downSys, size * reps),
        downloadLoopSecPerGiB: perGiB(cpu.downLoop, size * reps),
        rssBaseline: peaks.baseline,
        rssUploadPeak: peaks.upload,
        rssDownloadPeak: peaks.download,
      });
    }
  } finally {
    child.send('stop');
    await new Promise((r) => child.once('exit', r));
    await s3?.close();
    rmSync(work, { recursive: true, force: true });
  }
  report(results);
}

/** The server's CPU microseconds so far: all threads (`cpu`) and its event loop (`loop`). */
function serverCpu(child) {
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

const perGiB = (micros, bytes) => micros / 1e6 / (bytes / (1024 * MiB));

/** Runs a command to completion (stdio ignored); rejects on a non-zero exit. */
function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: 'ignore' });
    p.on('error', reject);
    p.on('exit', (code) =>
      code === 0 ? resolve(undefined) : reject(new Error(`${cmd} exited with ${code}`)),
    );
  });
}

/** Runs a command and drains its stdout; resolves with the byte count. */
function drain(cmd, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let bytes = 0;
    p.stdout.on('data', (c) => (bytes += c.length));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(bytes) : reject(new Error(`${cmd} exited with ${code}`))));
  });
}

/** Samples the server's RSS every 20 ms, keeping the peak per phase (upload / download). */
function sampleRss(pid) {
  const peaks = { baseline: rssOf(pid), upload: 0, download: 0 };
  let phase = 'idle';
  const take = () => {
    if (phase !== 'idle') peaks[phase] = Math.max(peaks[phase], rssOf(pid));
  };
  const t = setInterval(take, 20);
  return {
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

function bufferStream(s) {
  return { pipe: (req) => req.end(s) };
}

function report(r) {
  const f = (n, d = 1) => n.toFixed(d);
  const mib = (b) => `${f(b / MiB)} MiB`;
  console.log(`backend: ${r.backend}${r.quick ? ' (quick)' : ''}`);
  const rows = [
    [
      'size',
      'reps',
      'cp+fsync MiB/s',
      'upload MiB/s',
      'ratio',
      'cat MiB/s',
      'download MiB/s',
      'ratio',
      'up CPU s/GiB: all, sys, loop',
      'down CPU s/GiB: all, sys, loop',
      'RSS base',
      'RSS up peak',
      'RSS down peak',
    ],
  ];
  for (const s of r.sizes)
    rows.push([
      mib(s.size),
      String(s.reps),
      f(s.copySyncMiBps),
      f(s.uploadMiBps),
      f(s.uploadRatio, 2),
      f(s.catMiBps),
      f(s.downloadMiBps),
      f(s.downloadRatio, 2),
      `${f(s.uploadCpuSecPerGiB, 2)}, ${f(s.uploadSysSecPerGiB, 2)}, ${f(s.uploadLoopSecPerGiB, 2)}`,
      `${f(s.downloadCpuSecPerGiB, 2)}, ${f(s.downloadSysSecPerGiB, 2)}, ${f(s.downloadLoopSecPerGiB, 2)}`,
      mib(s.rssBaseline),
      mib(s.rssUploadPeak),
      mib(s.rssDownloadPeak),
    ]);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) console.log(row.map((c, i) => c.padStart(widths[i])).join('  '));
  const dir = join(here, '..', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `storage-${r.when.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(r, null, 2) + '\n');
  console.log(`\nwrote ${file}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
