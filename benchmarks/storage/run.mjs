// Storage API benchmark: upload/download throughput of 1 MiB and 256 MiB objects through the HTTP
// API, compared with a plain streamed file copy on the same disk, and the server's peak RSS while a
// 1 GiB object streams up and down. BENCH_QUICK=1 uses small sizes.
// BENCH_BACKEND=s3 stores the bytes in a local s3rver (in this process) instead of the file system.
// Prints a table and writes benchmarks/results/storage-<timestamp>.json.
import { fork } from 'node:child_process';
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
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const QUICK = process.env.BENCH_QUICK === '1';
const BACKEND = process.env.BENCH_BACKEND === 's3' ? 's3' : 'file';
const MiB = 1024 * 1024;
const SIZES = QUICK
  ? [
      { size: MiB, reps: 5 },
      { size: 16 * MiB, reps: 1 },
    ]
  : [
      { size: MiB, reps: 20 },
      { size: 256 * MiB, reps: 2 },
    ];
const RSS_SIZE = QUICK ? 64 * MiB : 1024 * MiB;
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
  const child = fork(join(here, 'server.mjs'), { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
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
    rss: {},
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
      let copy = 0,
        up = 0,
        down = 0;
      for (let i = 0; i < reps; i++) {
        const dst = join(work, `copy-${size}-${i}`);
        copy += await time(() => pipeline(createReadStream(src), createWriteStream(dst)));
        rmSync(dst);
        const key = `obj-${size}-${i}`;
        up += await time(() =>
          http(server, 'POST', `/object/bench/${key}`, {
            body: createReadStream(src),
            size,
            headers: { 'content-type': 'application/octet-stream' },
          }),
        );
        down += await time(async () => {
          const n = await http(server, 'GET', `/object/bench/${key}`);
          if (n !== size) throw new Error(`downloaded ${n} of ${size} bytes`);
        });
        await http(server, 'DELETE', `/object/bench/${key}`);
      }
      rmSync(src);
      const mbps = (t) => (size * reps) / MiB / t;
      results.sizes.push({
        size,
        reps,
        copyMiBps: mbps(copy),
        uploadMiBps: mbps(up),
        downloadMiBps: mbps(down),
        uploadRatio: mbps(up) / mbps(copy),
        downloadRatio: mbps(down) / mbps(copy),
      });
    }

    // Peak RSS of the server while one large object streams up, then down.
    const src = join(work, 'src-rss');
    await makeFile(src, RSS_SIZE);
    await new Promise((r) => setTimeout(r, 500));
    const baseline = rssOf(child.pid);
    const sample = (phase) => {
      let peak = 0;
      const t = setInterval(() => (peak = Math.max(peak, rssOf(child.pid))), 20);
      return () => {
        clearInterval(t);
        results.rss[phase] = Math.max(peak, rssOf(child.pid));
      };
    };
    let stop = sample('uploadPeak');
    const upT = await time(() =>
      http(server, 'POST', '/object/bench/rss', {
        body: createReadStream(src),
        size: RSS_SIZE,
        headers: { 'content-type': 'application/octet-stream' },
      }),
    );
    stop();
    stop = sample('downloadPeak');
    const downT = await time(() => http(server, 'GET', '/object/bench/rss'));
    stop();
    rmSync(src);
    results.rss = {
      objectSize: RSS_SIZE,
      baseline,
      ...results.rss,
      uploadMiBps: RSS_SIZE / MiB / upT,
      downloadMiBps: RSS_SIZE / MiB / downT,
    };
  } finally {
    child.send('stop');
    await new Promise((r) => child.once('exit', r));
    await s3?.close();
    rmSync(work, { recursive: true, force: true });
  }
  report(results);
}

function bufferStream(s) {
  return { pipe: (req) => req.end(s) };
}

function report(r) {
  const f = (n, d = 1) => n.toFixed(d);
  const mib = (b) => `${f(b / MiB)} MiB`;
  console.log(`backend: ${r.backend}${r.quick ? ' (quick)' : ''}`);
  const rows = [['size', 'reps', 'file copy MiB/s', 'upload MiB/s', 'ratio', 'download MiB/s', 'ratio']];
  for (const s of r.sizes)
    rows.push([
      mib(s.size),
      String(s.reps),
      f(s.copyMiBps),
      f(s.uploadMiBps),
      f(s.uploadRatio, 2),
      f(s.downloadMiBps),
      f(s.downloadRatio, 2),
    ]);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) console.log(row.map((c, i) => c.padStart(widths[i])).join('  '));
  console.log(
    `\nserver RSS with a ${mib(r.rss.objectSize)} object: baseline ${mib(r.rss.baseline)}, peak during upload ${mib(r.rss.uploadPeak)} (${f(r.rss.uploadMiBps)} MiB/s), ` +
      `peak during download ${mib(r.rss.downloadPeak)} (${f(r.rss.downloadMiBps)} MiB/s)`,
  );
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
