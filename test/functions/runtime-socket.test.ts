/**
 * The runtime on its own (no platform): a worker listens on a Unix socket in its temp folder, also
 * when the data folder's path is too long for a socket path (the temp folders then go to a private
 * folder in the system's temp folder, removed on close). (No TCP port: test/security/function-isolation.test.ts.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFromEnv } from '../../src/config.js';
import { denoBinary } from '../../src/functions/deno-binary.js';
import { FunctionLogs } from '../../src/functions/function-logs.js';
import { FunctionsRuntime } from '../../src/functions/runtime.js';

const base = mkdtempSync(join(tmpdir(), 'strata-rt-'));

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

async function hello(rootDir: string): Promise<{ text: string; tmpDir: string; tmpRootGone: boolean }> {
  const runtime = new FunctionsRuntime(
    { ...configFromEnv({}).functions, prewarm: false },
    rootDir,
    denoBinary(),
    new FunctionLogs(100),
  );
  const bundleDir = join(rootDir, 'bundles', 'ref', 'hello', 'sha');
  mkdirSync(bundleDir, { recursive: true });
  writeFileSync(
    join(bundleDir, 'index.ts'),
    `Deno.serve(() => new Response('hello from ' + Deno.env.get('WHO')));`,
  );
  let tmpDir = '';
  let text = '';
  try {
    const lease = await runtime.lease({
      ref: 'ref',
      slug: 'hello',
      fingerprint: 'f',
      bundleDir,
      entryPath: join(bundleDir, 'index.ts'),
      env: { WHO: 'socket' },
    });
    try {
      tmpDir = lease.worker.spec.tmpDir;
      expect(existsSync(join(tmpDir, '.worker.sock'))).toBe(true);
      const res = await lease.worker.pool?.request({ method: 'GET', path: '/hello', headers: { host: 'x' } });
      text = (await res?.body.text()) ?? '';
    } finally {
      lease.release();
    }
  } finally {
    await runtime.close();
  }
  const tmpRoot = join(tmpDir, '..');
  return { text, tmpDir, tmpRootGone: !existsSync(tmpRoot) };
}

describe('worker socket', () => {
  it('under a short data folder: in <root>/tmp/<id>/', async () => {
    const root = join(base, 'short');
    const r = await hello(root);
    expect(r.text).toBe('hello from socket');
    expect(r.tmpDir.startsWith(join(root, 'tmp'))).toBe(true);
    expect(existsSync(r.tmpDir)).toBe(false);
  });

  it('under a data folder too long for a socket path: in a private folder of the system temp, removed on close', async () => {
    const root = join(base, 'x'.repeat(60), 'y'.repeat(60));
    const r = await hello(root);
    expect(r.text).toBe('hello from socket');
    expect(r.tmpDir.startsWith(join(root, 'tmp'))).toBe(false);
    expect(r.tmpRootGone).toBe(true);
  });
});
