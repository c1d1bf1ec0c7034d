// Child process of run.mjs: a whole platform (embedded PostgreSQL in a temp folder, port 0), so the
// parent can sample this process's RSS while objects stream through it, and ask for its CPU time.
import { performance } from 'node:perf_hooks';
import { startPlatform } from '../../dist/server.js';
import { configFromEnv } from '../../dist/config.js';

const dataDir = process.env.BENCH_DATA_DIR ?? '';
/** @type {import('../../dist/config.js').StrataConfig} */
const config = {
  ...configFromEnv({}),
  dataDir,
  host: '127.0.0.1',
  port: 0,
  consolePort: undefined,
  dbPort: 0,
  // No pooler: the bench never uses it, and its fixed port may be taken by another instance.
  poolerPort: undefined,
  databaseUrl: undefined,
  storageFileSizeLimit: 4 * 1024 * 1024 * 1024,
  storageBackend: process.env.BENCH_S3_ENDPOINT ? 's3' : 'file',
  s3: process.env.BENCH_S3_ENDPOINT
    ? {
        endpoint: process.env.BENCH_S3_ENDPOINT,
        region: 'us-east-1',
        bucket: 'strata-bench',
        accessKeyId: 'S3RVER',
        secretAccessKey: 'S3RVER',
        forcePathStyle: true,
      }
    : undefined,
};
const running = await startPlatform(config);
const project = await running.platform.defaultProject();
process.send?.({ url: running.url, serviceRoleKey: project.serviceRoleKey, filesDir: project.filesDir });
process.on('message', async (m) => {
  // CPU of the whole process (all threads; of which in the kernel) and the event loop's busy time, in µs.
  if (m === 'cpu') {
    const { user, system } = process.cpuUsage();
    const { active } = performance.eventLoopUtilization();
    process.send?.({ cpu: user + system, sys: system, loop: active * 1000 });
    return;
  }
  if (m === 'stop') {
    await running.close();
    process.exit(0);
  }
});
