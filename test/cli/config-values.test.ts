/**
 * Settings that cannot be used stop the command before anything starts, naming the flag or
 * variable: a numeric setting that is not a number, a port outside 0–65535, a database address that
 * is not a postgresql:// URL (not repeated: it may hold a password). Empty means the default.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedDatabaseUrl, configFromEnv, portNumber } from '../../src/config.js';

const root = new URL('../../', import.meta.url).pathname;
const base = mkdtempSync(join(tmpdir(), 'strata-config-'));

beforeAll(() => {
  execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.mjs')], { stdio: 'ignore' });
}, 300_000);
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('environment variables', () => {
  it('a numeric one that is not a number is refused, naming it; empty means the default', () => {
    expect(() => configFromEnv({ STRATA_BODY_LIMIT: '1MB' })).toThrow(
      'STRATA_BODY_LIMIT must be a number (got "1MB")',
    );
    expect(configFromEnv({ STRATA_BODY_LIMIT: '' }).bodyLimit).toBe(1024 * 1024);
    expect(configFromEnv({ STRATA_BODY_LIMIT: '2048' }).bodyLimit).toBe(2048);
  });

  it('ports are whole numbers from 0 to 65535', () => {
    expect(() => configFromEnv({ STRATA_PORT: '65536' })).toThrow(/STRATA_PORT must be a port number/);
    expect(() => configFromEnv({ STRATA_DB_PORT: '-1' })).toThrow(/STRATA_DB_PORT must be a port number/);
    expect(() => configFromEnv({ PORT: '80.5' })).toThrow(/PORT must be a port number/);
    expect(configFromEnv({ PORT: '8080' }).port).toBe(8080);
    expect(configFromEnv({ STRATA_POOLER_PORT: 'off' }).poolerPort).toBeUndefined();
    expect(portNumber('0', '--port')).toBe(0);
  });

  it('database addresses must be postgresql:// URLs and are not repeated in the error', () => {
    expect(() => configFromEnv({ STRATA_DB_SERVERS: 'b=host:5432/pw-secret' })).toThrow(
      'STRATA_DB_SERVERS entry "b" must be a postgresql:// URL',
    );
    expect(() => checkedDatabaseUrl('user:pw-secret@host/db', 'DATABASE_URL')).toThrow(
      /^DATABASE_URL must be/,
    );
    expect(() => checkedDatabaseUrl('user:pw-secret@host/db', 'DATABASE_URL')).not.toThrow(/pw-secret/);
    expect(checkedDatabaseUrl('postgres://u@h/db', 'x')).toBe('postgres://u@h/db');
  });
});

describe('strata start', () => {
  const start = (args: string[], env: Record<string, string> = {}) => {
    const dataDir = join(base, String(Math.random()).slice(2));
    const r = spawnSync(
      process.execPath,
      [join(root, 'bin', 'strata.js'), 'start', '--data-dir', dataDir, ...args],
      {
        env: { ...process.env, DATABASE_URL: '', ...env },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    return { code: r.status, stderr: r.stderr, started: existsSync(dataDir) };
  };

  it('refuses a bad --port, --database-url or variable at once, creating nothing', () => {
    for (const [args, env, message] of [
      [['--port', '99999'], {}, '--port must be a port number, 0 to 65535 (got "99999")'],
      [['--db-port', 'x'], {}, '--db-port must be a port number'],
      [['--database-url', 'localhost/pw-secret'], {}, '--database-url must be a postgresql:// URL'],
      [[], { STRATA_SHUTDOWN_GRACE_MS: 'soon' }, 'STRATA_SHUTDOWN_GRACE_MS must be a number'],
    ] as const) {
      const r = start([...args], env);
      expect([args, env, r.code]).toEqual([args, env, 1]);
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toContain('pw-secret');
      expect(r.started).toBe(false);
    }
  });
});
