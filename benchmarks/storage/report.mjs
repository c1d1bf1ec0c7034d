// The storage bench's tables, its summary (what `npm run bench` prints) and its JSON file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MiB } from './io.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
export const GOALS = { uploadOverFloor: 0.8, downloadOverFloor: 0.9, peakRssMiB: 150 };
/** Sizes from this one up are the large-object throughput the goals are about. */
const SUMMARY_FROM = 64 * MiB;
/** The size whose uploads the RSS goal is about. */
const RSS_SIZE = 64 * MiB;

/**
 * The headline numbers: the worst upload and download ratio to the node floor over the sizes of
 * 64 MiB and up (every size if none is that large), and Strata's peak RSS during 64 MiB uploads
 * (during the largest uploads of the run if it has no 64 MiB size).
 */
export function summarize(sizes) {
  const large = sizes.filter((s) => s.size >= SUMMARY_FROM);
  const considered = large.length ? large : sizes;
  const worst = (key) => considered.reduce((w, s) => (w === undefined || s[key] < w[key] ? s : w), undefined);
  const up = worst('uploadOverFloor');
  const down = worst('downloadOverFloor');
  const rssRows = sizes.some((s) => s.size === RSS_SIZE)
    ? sizes.filter((s) => s.size === RSS_SIZE)
    : sizes.filter((s) => s.size === Math.max(...sizes.map((x) => x.size)));
  return {
    uploadOverFloor: up?.uploadOverFloor,
    uploadOverFloorSizeMiB: up && up.size / MiB,
    downloadOverFloor: down?.downloadOverFloor,
    downloadOverFloorSizeMiB: down && down.size / MiB,
    peakRssMiB: rssRows.length ? Math.max(...rssRows.map((s) => s.rssUploadPeak)) / MiB : undefined,
    peakRssSizeMiB: rssRows[0] && rssRows[0].size / MiB,
  };
}

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) console.log(row.map((c, i) => c.padStart(widths[i])).join('  '));
}

export function report(r) {
  const f = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
  const mib = (b) => `${f(b / MiB)} MiB`;
  console.log(`\nStorage, backend: ${r.backend}${r.quick ? ' (QUICK: smoke check, not a measurement)' : ''}`);
  console.log(
    'Throughput, MiB/s (ratios: Strata / node floor of the same run; cp + fsync and cat for scale)',
  );
  table([
    ['size', 'reps', 'upload', 'node floor', 'ratio', 'cp+fsync', 'download', 'node floor', 'ratio', 'cat'],
    ...r.sizes.map((s) => [
      mib(s.size),
      String(s.reps),
      f(s.uploadMiBps),
      f(s.floorUploadMiBps),
      f(s.uploadOverFloor, 2),
      f(s.copySyncMiBps),
      f(s.downloadMiBps),
      f(s.floorDownloadMiBps),
      f(s.downloadOverFloor, 2),
      f(s.catMiBps),
    ]),
  ]);
  console.log('\nCPU s per GiB (all threads, of which kernel, event loop) and RSS, Strata vs node floor');
  table([
    [
      'size',
      'up CPU strata',
      'up CPU floor',
      'down CPU strata',
      'down CPU floor',
      'RSS base',
      'RSS up peak',
      'RSS down peak',
      'floor RSS up/down',
    ],
    ...r.sizes.map((s) => [
      mib(s.size),
      `${f(s.uploadCpuSecPerGiB, 2)}, ${f(s.uploadSysSecPerGiB, 2)}, ${f(s.uploadLoopSecPerGiB, 2)}`,
      `${f(s.floorUploadCpuSecPerGiB, 2)}, ${f(s.floorUploadSysSecPerGiB, 2)}, ${f(s.floorUploadLoopSecPerGiB, 2)}`,
      `${f(s.downloadCpuSecPerGiB, 2)}, ${f(s.downloadSysSecPerGiB, 2)}, ${f(s.downloadLoopSecPerGiB, 2)}`,
      `${f(s.floorDownloadCpuSecPerGiB, 2)}, ${f(s.floorDownloadSysSecPerGiB, 2)}, ${f(s.floorDownloadLoopSecPerGiB, 2)}`,
      mib(s.rssBaseline),
      mib(s.rssUploadPeak),
      mib(s.rssDownloadPeak),
      `${f(s.floorRssUploadPeak / MiB)} / ${f(s.floorRssDownloadPeak / MiB)} MiB`,
    ]),
  ]);
  const s = r.summary;
  console.log(
    `\nupload strata/node-floor ${f(s.uploadOverFloor, 2)} at ${s.uploadOverFloorSizeMiB} MiB (goal ${GOALS.uploadOverFloor}); download ${f(s.downloadOverFloor, 2)} at ${s.downloadOverFloorSizeMiB} MiB (goal ${GOALS.downloadOverFloor}); peak RSS ${f(s.peakRssMiB, 0)} MiB during ${s.peakRssSizeMiB} MiB uploads (goal ${GOALS.peakRssMiB})`,
  );
  const file =
    process.env.BENCH_OUT ?? join(here, '..', 'results', `storage-${r.when.replace(/[:.]/g, '-')}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(r, null, 2) + '\n');
  console.log(`wrote ${file}`);
}
