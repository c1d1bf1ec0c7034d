/**
 * The real Supabase CLI (npm `supabase` v3, a dev dependency; its binary comes from
 * `@supabase/cli-linux-x64`) pointed at a test platform through a profile. STRATA_SUPABASE_CLI
 * names another binary. A missing binary fails the suite that imports this, it never skips.
 */
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CANDIDATES = [
  process.env.STRATA_SUPABASE_CLI,
  join(process.cwd(), 'node_modules/@supabase/cli-linux-x64/bin/supabase'),
].filter((p): p is string => !!p);
const found = CANDIDATES.find((p) => existsSync(p));
if (!found) throw new Error(`Supabase CLI binary not found (looked at ${CANDIDATES.join(', ')}): run npm ci`);
export const SUPABASE_CLI: string = found;

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Writes the profile (`<home>/strata.yaml`) that sends the CLI to the platform at `url`. */
export function writeCliProfile(home: string, url: string): void {
  writeFileSync(
    join(home, 'strata.yaml'),
    `name: strata\napi_url: ${url}\ndashboard_url: ${url}\nproject_host: localhost\n`,
  );
}

/** Runs the CLI with `home` as its HOME and profile folder, as the holder of `token`. */
export function runSupabase(
  args: string[],
  opts: { home: string; token: string; cwd?: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(
      SUPABASE_CLI,
      args,
      {
        cwd: opts.cwd ?? opts.home,
        timeout: opts.timeoutMs ?? 120_000,
        maxBuffer: 16 * 1024 * 1024,
        env: {
          PATH: process.env.PATH,
          HOME: opts.home,
          SUPABASE_ACCESS_TOKEN: opts.token,
          SUPABASE_PROFILE: join(opts.home, 'strata.yaml'),
          SUPABASE_TELEMETRY_DISABLED: '1',
          DO_NOT_TRACK: '1',
          SUPABASE_NO_KEYRING: '1',
          SUPABASE_YES: '1',
          NO_COLOR: '1',
          CI: '1',
          ...opts.env,
        },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    // Some commands (`migration new`) read SQL from a non-TTY stdin: give them an empty one.
    child.stdin?.end();
  });
}
