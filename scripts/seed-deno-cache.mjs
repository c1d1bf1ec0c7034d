// Caches the Supabase CLI function template's npm imports (dist/functions/deno-seed.js
// SEED_IMPORTS) into dist/deno-seed with the bundled Deno, while the npm registry is reachable
// (this runs in the build, which `npm ci` runs as `prepare`). The platform copies it into its data
// folder's Deno cache before a deploy, so the template deploys without the network. Done again only
// when the imports or the Deno version change; when the registry cannot be reached it says so in
// one line and the build goes on (the template then needs the network at deploy time).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const TIMEOUT_MS = 120_000;

function run(bin, args, env, cwd) {
  return new Promise((resolve) => {
    execFile(
      bin,
      args,
      { env, cwd, timeout: TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ ok: !err, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

/** The first line of Deno's complaint, without colours. */
function firstLine(text) {
  const plain = text.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
  return (plain.split('\n').find((l) => l.trim() && !/^\s*Download /.test(l)) ?? '').trim();
}

export async function seedDenoCache(root) {
  const dist = join(root, 'dist');
  const { SEED_IMPORTS } = await import(pathToFileURL(join(dist, 'functions', 'deno-seed.js')).href);
  const { denoBinary } = await import(pathToFileURL(join(dist, 'functions', 'deno-binary.js')).href);
  let deno;
  try {
    deno = denoBinary();
  } catch (err) {
    process.stderr.write(`strata: function template packages not cached: ${err.message}\n`);
    return;
  }
  const version = await run(deno, ['--version'], { NO_COLOR: '1' }, dist);
  const want = JSON.stringify({ imports: SEED_IMPORTS, deno: version.stdout.split('\n')[0] ?? '' });
  const seedDir = join(dist, 'deno-seed');
  const stamp = join(seedDir, 'seed.json');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return;

  const work = join(dist, `deno-seed.tmp-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    writeFileSync(join(work, 'entry.ts'), SEED_IMPORTS.map((s) => `import ${JSON.stringify(s)};\n`).join(''));
    const env = {
      DENO_DIR: join(work, 'cache'),
      DENO_NO_UPDATE_CHECK: '1',
      DENO_TLS_CA_STORE: 'system',
      NO_COLOR: '1',
    };
    // The proxy the platform's deploy check uses too (src/config.ts moduleProxy).
    for (const name of ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY']) {
      const v = process.env[name] || process.env[name.toLowerCase()];
      if (v) env[name] = v;
    }
    const r = await run(deno, ['cache', '--no-config', '--no-lock', 'entry.ts'], env, work);
    if (!r.ok || !existsSync(join(work, 'cache', 'npm'))) {
      process.stderr.write(
        `strata: function template packages not cached (${firstLine(r.stderr) || 'Deno failed'}); deploying it will need the network\n`,
      );
      return;
    }
    const next = join(work, 'seed');
    mkdirSync(next);
    renameSync(join(work, 'cache', 'npm'), join(next, 'npm'));
    writeFileSync(join(next, 'seed.json'), want);
    rmSync(seedDir, { recursive: true, force: true });
    renameSync(next, seedDir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
