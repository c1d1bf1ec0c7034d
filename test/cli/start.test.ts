/**
 * `strata start` end to end, as a user runs it: its own embedded PostgreSQL in a data folder,
 * the printed URLs and keys, `strata status --json`, clean stop on SIGTERM, same keys and data
 * after a restart, and recovery from a killed run (stale postmaster.pid / orphaned server).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freeTestPort } from '../support/free-port.js';
import { servingBanner, spawnCli, strataBin as bin } from '../support/strata-process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'strata-cli-'));
const env = { ...process.env, DATABASE_URL: '', STRATA_DATA_DIR: dataDir };

const children: ChildProcess[] = [];

interface Started {
  child: ChildProcess;
  output: string;
}

async function start(port: number): Promise<Started> {
  const p = spawnCli(['start', '--port', String(port), '--db-port', '0', '--console-port', '0'], { env });
  children.push(p.child);
  return { child: p.child, output: await servingBanner(p, { timeoutMs: 90_000 }) };
}

function stop(s: Started, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolve) => {
    s.child.once('exit', (code) => resolve(code));
    s.child.kill(signal);
  });
}

function status(): Record<string, string> {
  return JSON.parse(execFileSync(process.execPath, [bin, 'status', '--json'], { env }).toString());
}

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('strata start', () => {
  let port = 0;
  let first: Record<string, string>;

  it('prints the URLs and keys, and status --json gives the same as one object', async () => {
    port = await freeTestPort();
    const s = await start(port);
    for (const label of [
      'API URL',
      'GraphQL URL',
      'Storage URL',
      'Management URL',
      'anon key',
      'service_role key',
      'Access token',
      'DB URL',
      'Pooler URL',
    ]) {
      expect(s.output).toContain(label);
    }
    expect(s.output).toContain(`http://127.0.0.1:${port}/graphql/v1`);
    first = status();
    expect(Object.keys(first).sort()).toEqual(
      [
        'access_token',
        'anon_key',
        'api_url',
        'console_url',
        'db_url',
        'graphql_url',
        'jwt_secret',
        'management_url',
        'pooler_url',
        'project_ref',
        'project_url',
        'service_role_key',
        'storage_url',
        'superuser_db_url',
      ].sort(),
    );
    expect(first.graphql_url).toBe(`http://127.0.0.1:${port}/graphql/v1`);
    expect(first.access_token).toMatch(/^sbp_[0-9a-f]{40}$/);
    // The pooler's default port (54329) is not this machine's PostgreSQL's 5432; null (and a
    // logged line) only when something else has 54329.
    if (first.pooler_url !== null)
      expect(first.pooler_url).toBe(
        `postgresql://postgres.${first.project_ref}:[YOUR-PASSWORD]@127.0.0.1:54329/postgres?sslmode=disable`,
      );
    else expect(s.output).toContain('pooler not started on 127.0.0.1:54329');
    expect(s.output).toContain(`Pooler URL: ${first.pooler_url ?? 'not running'}`);
    // The console has its own origin (its own port), printed with a one-time login link.
    expect(first.console_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(first.console_url).not.toBe(first.api_url);
    expect(s.output).toMatch(new RegExp(`Console URL: ${first.console_url}/#login=[\\w-]+`));
    expect((await fetch(`${first.console_url}/`)).headers.get('content-security-policy')).toContain(
      `connect-src 'self' ${first.api_url} ${first.api_url.replace(/^http/, 'ws')};`,
    );
    expect(s.output).toContain(first.anon_key);

    // apikey checking at the bare address
    const noKey = await fetch(first.graphql_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"{__typename}"}',
    });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toHaveProperty('message');
    const withKey = await fetch(first.graphql_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', apikey: first.anon_key },
      body: '{"query":"{__typename}"}',
    });
    expect(withKey.status).toBe(200);
    expect(withKey.headers.get('content-type')).toMatch(/json/);
    // the default local project has introspection on (GraphiQL's docs explorer), and says so
    const intro = await fetch(first.graphql_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', apikey: first.anon_key },
      body: '{"query":"{ __schema { queryType { name } } }"}',
    });
    expect(await intro.json()).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
    expect(s.output).toContain('"introspection": true');

    // The DB URL is the project's own login (the tenant admin role), not the platform's superuser.
    expect(decodeURIComponent(new URL(first.db_url).username)).toBe(`postgres.${first.project_ref}`);
    expect(s.output).not.toContain(first.superuser_db_url);
    // data written through the DB URL
    const c = new pg.Client({ connectionString: first.db_url });
    await c.connect();
    await c.query("create table kept (v text); insert into kept values ('still here')");
    await c.end();

    await stop(s);
    expect(existsSync(join(dataDir, 'db', 'postmaster.pid'))).toBe(false);
  });

  it('a second start reuses the data and prints the same keys', async () => {
    const s = await start(port);
    const again = status();
    for (const k of ['anon_key', 'service_role_key', 'jwt_secret', 'access_token', 'project_ref'])
      expect(again[k]).toBe(first[k]);
    const c = new pg.Client({ connectionString: again.db_url });
    await c.connect();
    expect((await c.query('select v from kept')).rows).toEqual([{ v: 'still here' }]);
    await c.end();
    await stop(s, 'SIGINT');
    expect(existsSync(join(dataDir, 'db', 'postmaster.pid'))).toBe(false);
  });

  it('recovers after the process was killed (orphaned server, stale lock)', async () => {
    const s = await start(port);
    const pidFile = join(dataDir, 'db', 'postmaster.pid');
    const pgPid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    await stop(s, 'SIGKILL');
    const s2 = await start(port);
    expect(status().anon_key).toBe(first.anon_key);
    expect(Number(readFileSync(pidFile, 'utf8').split('\n')[0])).not.toBe(pgPid);
    await stop(s2);
    expect(existsSync(pidFile)).toBe(false);
  });

  it('status says so when nothing runs', () => {
    let code = 0;
    try {
      execFileSync(process.execPath, [bin, 'status', '--json'], { env, stdio: 'pipe' });
    } catch (err) {
      code = (err as { status: number }).status;
    }
    expect(code).toBe(1);
  });
});
