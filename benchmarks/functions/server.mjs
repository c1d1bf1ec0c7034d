// Child process of run.mjs: a whole platform (embedded PostgreSQL in a temp folder, port 0).
import { startPlatform } from '../../dist/server.js';
import { configFromEnv } from '../../dist/config.js';

/** @type {import('../../dist/config.js').StrataConfig} */
const config = {
  ...configFromEnv({}),
  dataDir: process.env.BENCH_DATA_DIR ?? '',
  host: '127.0.0.1',
  port: 0,
  consolePort: undefined,
  dbPort: 0,
  // No pooler: the bench never uses it, and its fixed port may be taken by another instance.
  poolerPort: undefined,
  databaseUrl: undefined,
};
// run.mjs lets idle workers go quickly, to time a start on request (no pre-started worker).
if (process.env.BENCH_IDLE_MS)
  config.functions = { ...config.functions, idleTimeoutMs: Number(process.env.BENCH_IDLE_MS) };
const running = await startPlatform(config);
const project = await running.platform.defaultProject();
process.send?.({
  url: running.url,
  ref: project.ref,
  anonKey: project.anonKey,
  accessToken: running.platform.defaultAccessToken,
});
process.on('message', async (m) => {
  // This process's own CPU time in µs (its Deno workers and the embedded database are other processes).
  if (m === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send?.({ cpu: user + system });
    return;
  }
  if (m === 'stop') {
    await running.close();
    process.exit(0);
  }
});
