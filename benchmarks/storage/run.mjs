// Storage API benchmark: upload/download throughput of 1 MiB, 64 MiB, 256 MiB and 1 GiB objects
// through the HTTP API, each compared in the same run, on the same bytes and disk, with its floor:
// node-floor.mjs, a bare node:http server doing the same job and nothing else —
// - upload floor: streams the body to a file, computes the same MD5, fsyncs the file and its folder
//   (the durability an acknowledged upload has: Strata fsyncs the object file and the folder entry
//   that publishes it);
// - download floor: a file read stream (1 MiB reads) piped to the response.
// The floor and Strata take turns going first, rep by rep. For scale, the OS tools on the same
// bytes: `cp SRC DST && sync DST DIR` (the copy plus an fsync of that file and its folder) and
// `cat SRC` from the page cache into a pipe this process drains.
// And the server's peak RSS while each size streams up and down, and its CPU seconds per GiB moved
// (all threads, and the event loop's busy time alone), which the machine's load inflates far less
// than wall time; the same for the floor. BENCH_QUICK=1 uses fewer sizes and reps;
// BENCH_SIZES=64x3,256x1 picks sizes (MiB) x reps; BENCH_CPU_PROF=DIR profiles the server.
// BENCH_BACKEND=s3 stores the bytes in a local s3rver (in this process) instead of the file system
// (the floor still writes files).
// Prints tables and writes benchmarks/results/storage-<timestamp>.json (or BENCH_OUT).
import { fork } from 'node:child_process';
import { createReadStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { MiB, bufferStream, childCpu, drain, http, makeFile, run, sampleRss, time } from './io.mjs';
import { GOALS, report, summarize } from './report.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const BACKEND = process.env.BENCH_BACKEND === 's3' ? 's3' : 'file';
const SIZES = process.env.BENCH_SIZES
  ? process.env.BENCH_SIZES.split(',').map((spec) => {
      const [mib, reps = '1'] = spec.split('x');
      return { size: Number(mib) * MiB, reps: Number(reps) };
    })
  : QUICK
    ? [
        { size: MiB, reps: 5 },
        { size: 64 * MiB, reps: 2 },
      ]
    : [
        { size: MiB, reps: 20 },
        { size: 64 * MiB, reps: 3 },
        { size: 256 * MiB, reps: 2 },
        { size: 1024 * MiB, reps: 1 },
      ];
const here = fileURLToPath(new URL('.', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'strata-bench-storage-'));

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

/** Forks `file`; resolves with the child and the first message it sends (its address). */
function startChild(file, env, execArgv = []) {
  const child = fork(join(here, file), { env, execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (info) => resolve({ child, info }));
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
}

/** Asks a child to stop; kills it if it has not exited 30 s later. */
function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    child.send('stop');
  });
}

const perGiB = (micros, bytes) => micros / 1e6 / (bytes / (1024 * MiB));

async function main() {
  const s3 = BACKEND === 's3' ? await startS3() : undefined;
  const floorDir = join(work, 'floor');
  mkdirSync(floorDir);
  const results = {
    when: new Date().toISOString(),
    quick: QUICK,
    node: process.version,
    backend: BACKEND,
    /** @type {Record<string, number>[]} */
    sizes: [],
    /** @type {ReturnType<typeof summarize> | undefined} */
    summary: undefined,
    goals: GOALS,
  };
  /** @type {import('node:child_process').ChildProcess[]} */
  const started = [];
  try {
    // BENCH_CPU_PROF=DIR writes a V8 CPU profile of the server (node --cpu-prof) into DIR.
    const execArgv = process.env.BENCH_CPU_PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
      : [];
    const server = await startChild(
      'server.mjs',
      {
        ...process.env,
        BENCH_DATA_DIR: join(work, 'data'),
        ...(s3 ? { BENCH_S3_ENDPOINT: s3.endpoint } : {}),
      },
      execArgv,
    );
    started.push(server.child);
    const floor = await startChild('node-floor.mjs', { ...process.env, BENCH_FLOOR_DIR: floorDir });
    started.push(floor.child);
    const targets = {
      strata: {
        child: server.child,
        base: {
          url: `${server.info.url}/storage/v1`,
          headers: { authorization: `Bearer ${server.info.serviceRoleKey}` },
        },
        path: (key) => `/object/bench/${key}`,
      },
      floor: { child: floor.child, base: { url: floor.info.url, headers: {} }, path: (key) => `/${key}` },
    };
    await http(targets.strata.base, 'POST', '/bucket', {
      headers: { 'content-type': 'application/json' },
      body: bufferStream('{"name":"bench"}'),
      size: 16,
    });

    for (const { size, reps } of SIZES) {
      const src = join(work, `src-${size}`);
      await makeFile(src, size);
      await run('sync', [src]);
      let copy = 0;
      let cat = 0;
      const acc = {};
      for (const name of ['strata', 'floor'])
        acc[name] = {
          up: 0,
          down: 0,
          cpu: { up: 0, upSys: 0, upLoop: 0, down: 0, downSys: 0, downLoop: 0 },
          rss: sampleRss(targets[name].child.pid),
        };
      /** Times `fn` on target `name` in phase `phase`, adding its wall and CPU time. */
      const measured = async (name, phase, fn) => {
        const a = acc[name];
        a.rss.phase(phase);
        const before = await childCpu(targets[name].child);
        a[phase === 'upload' ? 'up' : 'down'] += await time(fn);
        const after = await childCpu(targets[name].child);
        a.rss.phase('idle');
        const k = phase === 'upload' ? 'up' : 'down';
        a.cpu[k] += after.cpu - before.cpu;
        a.cpu[`${k}Sys`] += after.sys - before.sys;
        a.cpu[`${k}Loop`] += after.loop - before.loop;
      };
      for (let i = 0; i < reps; i++) {
        const order = i % 2 === 0 ? ['floor', 'strata'] : ['strata', 'floor'];
        const key = `obj-${size}-${i}`;
        const dst = join(work, `copy-${size}-${i}`);
        copy += await time(() => run('sh', ['-c', 'cp "$1" "$2" && sync "$2" "$3"', 'sh', src, dst, work]));
        rmSync(dst);
        for (const name of order)
          await measured(name, 'upload', () =>
            http(targets[name].base, 'POST', targets[name].path(key), {
              body: createReadStream(src),
              size,
              headers: { 'content-type': 'application/octet-stream' },
            }),
          );
        cat += await time(async () => {
          const n = await drain('cat', [src]);
          if (n !== size) throw new Error(`cat read ${n} of ${size} bytes`);
        });
        for (const name of order)
          await measured(name, 'download', async () => {
            const n = await http(targets[name].base, 'GET', targets[name].path(key));
            if (n !== size) throw new Error(`${name}: downloaded ${n} of ${size} bytes`);
          });
        for (const name of order) await http(targets[name].base, 'DELETE', targets[name].path(key));
      }
      const peaks = { strata: acc.strata.rss.stop(), floor: acc.floor.rss.stop() };
      rmSync(src);
      const bytes = size * reps;
      const mbps = (t) => bytes / MiB / t;
      const s = acc.strata;
      const fl = acc.floor;
      results.sizes.push({
        size,
        reps,
        uploadMiBps: mbps(s.up),
        floorUploadMiBps: mbps(fl.up),
        uploadOverFloor: fl.up / s.up,
        downloadMiBps: mbps(s.down),
        floorDownloadMiBps: mbps(fl.down),
        downloadOverFloor: fl.down / s.down,
        copySyncMiBps: mbps(copy),
        catMiBps: mbps(cat),
        uploadOverCopySync: copy / s.up,
        downloadOverCat: cat / s.down,
        uploadCpuSecPerGiB: perGiB(s.cpu.up, bytes),
        uploadSysSecPerGiB: perGiB(s.cpu.upSys, bytes),
        uploadLoopSecPerGiB: perGiB(s.cpu.upLoop, bytes),
        downloadCpuSecPerGiB: perGiB(s.cpu.down, bytes),
        downloadSysSecPerGiB: perGiB(s.cpu.downSys, bytes),
        downloadLoopSecPerGiB: perGiB(s.cpu.downLoop, bytes),
        floorUploadCpuSecPerGiB: perGiB(fl.cpu.up, bytes),
        floorUploadSysSecPerGiB: perGiB(fl.cpu.upSys, bytes),
        floorUploadLoopSecPerGiB: perGiB(fl.cpu.upLoop, bytes),
        floorDownloadCpuSecPerGiB: perGiB(fl.cpu.down, bytes),
        floorDownloadSysSecPerGiB: perGiB(fl.cpu.downSys, bytes),
        floorDownloadLoopSecPerGiB: perGiB(fl.cpu.downLoop, bytes),
        rssBaseline: peaks.strata.baseline,
        rssUploadPeak: peaks.strata.upload,
        rssDownloadPeak: peaks.strata.download,
        floorRssUploadPeak: peaks.floor.upload,
        floorRssDownloadPeak: peaks.floor.download,
      });
    }
  } finally {
    for (const child of started.reverse()) await stopChild(child);
    await s3?.close();
    rmSync(work, { recursive: true, force: true });
  }
  // What `npm run bench` reads (benchmarks/run-all.mjs).
  results.summary = summarize(results.sizes);
  report(results);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
