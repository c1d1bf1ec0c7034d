/** Where the Deno binary is: STRATA_DENO_BIN, else the one the `deno` npm package installed. */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const PLATFORM_PACKAGES: Record<string, string> = {
  'linux-x64': '@deno/linux-x64-glibc',
  'linux-arm64': '@deno/linux-arm64-glibc',
  'darwin-x64': '@deno/darwin-x64',
  'darwin-arm64': '@deno/darwin-arm64',
};

export function denoBinary(configured?: string): string {
  if (configured) return configured;
  const pkg = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  if (!pkg) throw new Error(`No Deno binary for ${process.platform}-${process.arch}: set STRATA_DENO_BIN`);
  const require = createRequire(import.meta.url);
  let dir: string;
  try {
    dir = dirname(
      require.resolve(`${pkg}/package.json`, { paths: [dirname(require.resolve('deno/package.json'))] }),
    );
  } catch {
    throw new Error(`The ${pkg} package (from the deno npm package) is not installed: set STRATA_DENO_BIN`);
  }
  const bin = join(dir, 'deno');
  if (!existsSync(bin)) throw new Error(`${bin} is missing: set STRATA_DENO_BIN`);
  return bin;
}
