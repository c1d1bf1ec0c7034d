// The npm registry mirror reachable from our build machines serves only the Linux builds of
// platform-specific optional packages (e.g. @rollup/rollup-darwin-arm64 is a 404 there), so npm
// leaves them out of package-lock.json and `npm ci` then refuses the lock ("Missing: ... from lock
// file"). This adds, for every optional dependency missing from the lock, an entry that names its
// platform (os/cpu/libc from the package name), which npm skips on other platforms.
// Run after `npm install` whenever dependencies change: node scripts/lock-stub-optional.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const pkgs = lock.packages;
const OS = [
  'android',
  'darwin',
  'freebsd',
  'linux',
  'openbsd',
  'netbsd',
  'sunos',
  'win32',
  'aix',
  'openharmony',
];
const CPU = {
  arm: 'arm',
  arm64: 'arm64',
  x64: 'x64',
  ia32: 'ia32',
  loong64: 'loong64',
  ppc64: 'ppc64',
  riscv64: 'riscv64',
  s390x: 's390x',
  wasm32: 'wasm32',
  mips64el: 'mips64el',
};
let added = 0;

function platformOf(name) {
  const tokens = name.split('/').pop().split('-');
  const os =
    tokens.find((t) => OS.includes(t)) ??
    (tokens.includes('windows') || tokens.includes('win') ? 'win32' : undefined);
  const cpu = tokens.map((t) => CPU[t]).find(Boolean);
  const libc =
    tokens.includes('musl') || tokens.includes('musleabihf')
      ? 'musl'
      : tokens.includes('gnu') || tokens.includes('gnueabihf')
        ? 'glibc'
        : undefined;
  return { os, cpu, libc };
}

for (const [path, meta] of Object.entries(pkgs)) {
  for (const [dep, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const nested = `${path ? path + '/' : ''}node_modules/${dep}`;
    if (pkgs[nested] || pkgs[`node_modules/${dep}`]) continue;
    const { os, cpu, libc } = platformOf(dep);
    if (!os && !cpu) continue; // not a platform package: leave it to npm
    const entry = { version: String(version).replace(/^[\^~]/, ''), optional: true };
    if (cpu) entry.cpu = [cpu];
    if (libc) entry.libc = [libc];
    if (os) entry.os = [os];
    pkgs[`node_modules/${dep}`] = entry;
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`lock-stub-optional: ${added} platform entries added`);
