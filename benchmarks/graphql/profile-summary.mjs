// Summarises a V8 .cpuprofile (from BENCH_CPU_PROF=1): self time by function and by package/file,
// and total (inclusive) time of the frames whose names match PATTERN.
//   node benchmarks/graphql/profile-summary.mjs <file.cpuprofile> [top=30] [pattern]
import { readFileSync } from 'node:fs';

const [file, topArg, pattern] = process.argv.slice(2);
const top = Number(topArg ?? 30);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const dt = new Map();
for (let i = 0; i < prof.samples.length; i++)
  dt.set(prof.samples[i], (dt.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0));
const total = [...dt.values()].reduce((a, b) => a + b, 0);
const short = (url) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/.*node_modules\//, 'nm:')
    .replace(/.*\/(dist|src)\//, '$1/');
const label = (n) =>
  `${n.callFrame.functionName || '(anon)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const bySelf = new Map(),
  byFile = new Map(),
  incl = new Map();
for (const [id, t] of dt) {
  const n = nodes.get(id);
  bySelf.set(label(n), (bySelf.get(label(n)) ?? 0) + t);
  const f = short(n.callFrame.url).replace(/^nm:((@[^/]+\/)?[^/]+).*/, 'nm:$1') || n.callFrame.functionName;
  byFile.set(f, (byFile.get(f) ?? 0) + t);
  if (pattern) {
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const l = label(nodes.get(cur));
      if (new RegExp(pattern).test(l) && !seen.has(l)) {
        seen.add(l);
        incl.set(l, (incl.get(l) ?? 0) + t);
      }
    }
  }
}
const pct = (t) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
const show = (title, m, n = top) => {
  console.log(`\n${title}`);
  for (const [k, t] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${pct(t)}  ${k}`);
};
console.log(`total sampled ${(total / 1e6).toFixed(2)} s`);
show('self time by file/package', byFile, 25);
show('self time by function', bySelf);
if (pattern) show(`inclusive time of frames matching /${pattern}/`, incl, 60);
