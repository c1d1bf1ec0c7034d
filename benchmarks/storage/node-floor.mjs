// Child process of run.mjs: the node floors of the storage bench, on bare node:http, doing the same
// job as Strata's file backend and nothing else (no keys, buckets, metadata or database):
// - upload floor, `POST /<name>`: streams the request body into the file <name> of BENCH_FLOOR_DIR,
//   computing the same MD5 (the ETag) on the way, fsyncs the file and its folder (the durability
//   an acknowledged upload has) and answers the MD5;
// - download floor, `GET /<name>`: a file read stream piped to the response, reading 1 MiB at a
//   time (half the CPU per GiB of Node's default 64 KiB here; BENCH_FLOOR_READ_KIB changes it);
// - `DELETE /<name>` removes the file.
// Answers 'cpu' with its CPU time as the Strata server does (server.mjs) and 'stop' by exiting.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';

const dir = process.env.BENCH_FLOOR_DIR ?? '';
/** Bytes per read of the download floor's file stream (BENCH_FLOOR_READ_KIB; Node's default is 64 KiB). */
const READ_BYTES = Number(process.env.BENCH_FLOOR_READ_KIB ?? 1024) * 1024;
if (!dir) throw new Error('BENCH_FLOOR_DIR is not set');

/** @param {import('node:http').IncomingMessage} req @param {string} file */
async function receive(req, file) {
  const md5 = createHash('md5');
  req.on('data', (chunk) => md5.update(chunk));
  // `flush`: the file is fsynced before its stream closes (and the pipeline resolves).
  await pipeline(req, createWriteStream(file, { flush: true }));
  const folder = await open(dir, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
  return md5.digest('hex');
}

const server = createServer((req, res) => {
  const file = join(dir, encodeURIComponent(decodeURIComponent((req.url ?? '/').slice(1))));
  const answer = async () => {
    if (req.method === 'POST') {
      const etag = await receive(req, file);
      res.writeHead(200, { 'content-type': 'application/json', etag: `"${etag}"` });
      res.end(JSON.stringify({ etag }));
    } else if (req.method === 'GET') {
      const { size } = await stat(file);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
      await pipeline(createReadStream(file, { highWaterMark: READ_BYTES }), res);
    } else if (req.method === 'DELETE') {
      await rm(file);
      res.writeHead(204).end();
    } else res.writeHead(405).end();
  };
  answer().catch((err) => {
    console.error(`node floor: ${req.method} ${req.url}: ${err.message}`);
    if (!res.headersSent) res.writeHead(500).end();
    else res.destroy();
  });
});

server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  process.send?.({ url: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}` });
});
process.on('message', (m) => {
  if (m === 'cpu') {
    const { user, system } = process.cpuUsage();
    const { active } = performance.eventLoopUtilization();
    process.send?.({ cpu: user + system, sys: system, loop: active * 1000 });
  } else if (m === 'stop') {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  }
});
