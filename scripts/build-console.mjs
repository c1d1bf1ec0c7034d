// Bundles the web console (console/src, TypeScript + React) with esbuild into dist/console/app:
// index.html, assets/<name>-<hash>.js|css. GraphiQL is a separate chunk loaded when its page opens;
// its stylesheet is a separate asset whose address index.html names (meta graphiql-css).
// Run by build-if-needed.mjs; by hand: node scripts/build-console.mjs
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'dist', 'console', 'app');

export async function buildConsole() {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'assets'), { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [
      { in: 'console/src/main.tsx', out: 'main' },
      { in: 'console/src/styles.css', out: 'styles' },
      { in: 'graphiql/graphiql.css', out: 'graphiql' },
    ],
    outdir: join(out, 'assets'),
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    sourcemap: false,
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    loader: { '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.svg': 'file', '.png': 'file' },
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const url = (entry) => {
    const [file] = Object.entries(result.metafile.outputs).find(([, o]) => o.entryPoint === entry) ?? [];
    if (!file) throw new Error(`build-console: no output for ${entry}`);
    return '/console/' + relative(out, join(root, file)).split('\\').join('/');
  };
  const template = readFileSync(join(root, 'console', 'index.html'), 'utf8');
  const html = template
    .replace('%MAIN_JS%', url('console/src/main.tsx'))
    .replace('%MAIN_CSS%', url('console/src/styles.css'))
    .replace('%GRAPHIQL_CSS%', url('node_modules/graphiql/dist/style.css'));
  writeFileSync(join(out, 'index.html'), html);
  // What went into each asset (esbuild's metafile), beside the served folder: for size budgets.
  writeFileSync(join(out, '..', 'bundle-meta.json'), JSON.stringify(result.metafile));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const t0 = Date.now();
  await buildConsole();
  process.stderr.write(`strata: console built in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}
