// Child process of run.mjs: a whole platform (embedded PostgreSQL in a temp folder, port 0), so the
// parent can read this process's CPU and RSS, and the embedded PostgreSQL's CPU, from /proc.
// The realtime knobs pass through: every STRATA_REALTIME_* variable of the environment
// (STRATA_REALTIME_CONCURRENCY, _INTERVAL_MS, _MAX_PER_PROJECT, _MAX_PER_CONNECTION, _REPLICATION,
// and any later one), nothing else of the caller's STRATA_* settings.
import { startPlatform } from '../../dist/server.js';
import { configFromEnv } from '../../dist/config.js';

const passed = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => k.startsWith('STRATA_REALTIME_')),
);
/** @type {import('../../dist/config.js').StrataConfig} */
const config = {
  ...configFromEnv(passed),
  dataDir: process.env.BENCH_DATA_DIR ?? '',
  host: '127.0.0.1',
  port: 0,
  consolePort: undefined,
  dbPort: 0,
  // No pooler: the bench never uses it, and its fixed port may be taken by another instance.
  poolerPort: undefined,
  databaseUrl: undefined,
};
const running = await startPlatform(config);
const project = await running.platform.defaultProject();
process.send?.({
  url: running.url,
  ref: project.ref,
  anonKey: project.anonKey,
  jwtSecret: project.jwtSecret,
  superuserUrl: project.superuserUrl,
  realtime: config.realtime,
});

let closing;
const stop = () => {
  closing ??= running.close().finally(() => process.exit(0));
  return closing;
};
process.on('message', (m) => {
  // Live-query counters of this node (groups, subscribers, statements run so far).
  if (m === 'stats') {
    let stats;
    try {
      stats = running.realtime.stats();
    } catch {}
    const mib = (n) => Math.round(n / 1048576);
    const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
    const memory = {
      rss: mib(rss),
      heapTotal: mib(heapTotal),
      heapUsed: mib(heapUsed),
      external: mib(external),
      arrayBuffers: mib(arrayBuffers),
    };
    process.send?.({ type: 'stats', stats, memory });
  } else if (m === 'stop') void stop();
});
// The parent went away (crashed, or was killed): stop the embedded PostgreSQL with us.
process.on('disconnect', () => void stop());
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
