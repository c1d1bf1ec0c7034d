/**
 * `strata users` and `strata tokens` as an operator runs them (bin/strata.js, a separate process)
 * against a running platform's database: members get roles the Management API enforces at once,
 * a token is printed once and stored only as a digest, and revoking it locks it out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { serverUrl } from '../support/database.js';
import { api } from '../support/management.js';

const root = new URL('../../', import.meta.url).pathname;
const bin = join(root, 'bin', 'strata.js');
let tp: TestPlatform;
let emptyDir: string;

function strata(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { ...process.env, DATABASE_URL: '', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The CLI pointed at the test platform's database. */
const cli = (...args: string[]) =>
  strata([...args, '--platform-database', tp.platform.platformDatabase], { DATABASE_URL: serverUrl() });

beforeAll(async () => {
  tp = await startTestPlatform();
  emptyDir = mkdtempSync(join(tmpdir(), 'strata-users-'));
}, 120_000);
afterAll(async () => {
  await tp?.close();
  rmSync(emptyDir, { recursive: true, force: true });
});

describe('strata users / strata tokens', () => {
  it('refuses bad input with a clear message and a non-zero exit', async () => {
    for (const [args, msg] of [
      [['users', 'add', 'not-an-email'], /not an email address/],
      [
        ['users', 'add', 'x@y.test', '--role', 'superuser'],
        /--role must be one of read_only, developer, administrator, owner/,
      ],
      [['users', 'add', 'x@y.test', '--org', 'no-such-org'], /organization no-such-org does not exist/],
      [['users', 'frobnicate'], /unknown users command/],
      [['tokens', 'create'], /needs --user/],
      [['tokens', 'create', '--user', 'nobody@y.test'], /no user nobody@y.test/],
      [['tokens', 'revoke', 'not-a-uuid'], /not a token id/],
      [['tokens', 'revoke', '00000000-0000-0000-0000-000000000000'], /no token/],
    ] as const) {
      const r = await cli(...args);
      expect([args.join(' '), r.code]).toEqual([args.join(' '), 1]);
      expect(r.stderr).toMatch(msg);
    }
  });

  it('without a running platform nor --database-url it says so', async () => {
    const r = await strata(['users', 'list', '--data-dir', emptyDir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Strata is not running in .*start it/);
  });

  it('adds a member, prints a token once (stored as a digest), and the API enforces the role', async () => {
    const added = await cli('users', 'add', 'dev@cli.test', '--role', 'developer');
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/Added dev@cli.test to default-org as developer/);

    const created = await cli('tokens', 'create', '--user', 'dev@cli.test', '--name', 'ci');
    expect(created.code).toBe(0);
    const token = created.stdout.split('\n')[0] ?? '';
    expect(token).toMatch(/^sbp_[0-9a-f]{40}$/);
    const stored = await tp.platform.pool.query<{ token_sha256: string }>(
      `select t.token_sha256 from access_tokens t join users u on u.id = t.user_id where u.email = 'dev@cli.test'`,
    );
    expect(stored.rows).toEqual([{ token_sha256: createHash('sha256').update(token).digest('hex') }]);

    const ref = tp.platform.defaultRef;
    expect((await api(tp, 'GET', `/v1/projects/${ref}/secrets`, { token })).status).toBe(200);
    expect((await api(tp, 'GET', `/v1/projects/${ref}/pgsodium`, { token })).status).toBe(403);

    const listed = await cli('tokens', 'list', '--user', 'dev@cli.test', '--json');
    const tokens = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
    expect(tokens.map((t) => [t.email, t.name])).toEqual([['dev@cli.test', 'ci']]);
    expect(listed.stdout).not.toContain(token);
    expect(listed.stdout).not.toContain(stored.rows[0]?.token_sha256);

    const users = JSON.parse((await cli('users', 'list', '--json')).stdout) as Array<Record<string, unknown>>;
    expect(users).toContainEqual(
      expect.objectContaining({ email: 'dev@cli.test', organization: 'default-org', role: 'developer' }),
    );
    expect((await cli('users', 'list')).stdout).toMatch(/dev@cli\.test\s+default-org\s+developer/);

    // Demoted: the same token loses access to secrets at once.
    const demoted = await cli('users', 'add', 'dev@cli.test', '--role', 'read_only');
    expect(demoted.stdout).toMatch(/now read_only of default-org \(was developer\)/);
    expect((await api(tp, 'GET', `/v1/projects/${ref}/secrets`, { token })).status).toBe(403);
    expect((await api(tp, 'GET', `/v1/projects/${ref}`, { token })).status).toBe(200);

    // Revoked: 401 from then on.
    const revoked = await cli('tokens', 'revoke', String(tokens[0]?.id));
    expect(revoked.code).toBe(0);
    expect((await api(tp, 'GET', `/v1/projects/${ref}`, { token })).status).toBe(401);
  });

  it('revoking the default token survives its re-registration at start', async () => {
    const token = tp.platform.defaultAccessToken;
    const list = JSON.parse(
      (await cli('tokens', 'list', '--user', 'admin@localhost', '--json')).stdout,
    ) as Array<{
      id: string;
      name: string;
    }>;
    const id = list.find((t) => t.name === 'default')?.id ?? '';
    expect((await cli('tokens', 'revoke', id)).code).toBe(0);
    expect((await api(tp, 'GET', '/v1/organizations', { token })).status).toBe(401);
    // What Platform.ensureDefaults runs at every start:
    await tp.platform.pool.query(
      `insert into access_tokens (user_id, name, token_sha256)
       select id, 'default', $1 from users where email = 'admin@localhost' on conflict (token_sha256) do nothing`,
      [createHash('sha256').update(token).digest('hex')],
    );
    expect((await api(tp, 'GET', '/v1/organizations', { token })).status).toBe(401);
    const again = await cli('tokens', 'revoke', id);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no token/);
    // The owner gets a new token from the CLI.
    const fresh = (await cli('tokens', 'create', '--user', 'admin@localhost')).stdout.split('\n')[0] ?? '';
    expect((await api(tp, 'GET', '/v1/organizations', { token: fresh })).status).toBe(200);
  });

  it('never removes or demotes the last owner; removes members and users', async () => {
    const last = await cli('users', 'remove', 'admin@localhost', '--org', 'default-org');
    expect(last.code).toBe(1);
    expect(last.stderr).toMatch(/last owner of default-org/);
    const demote = await cli('users', 'add', 'admin@localhost', '--role', 'developer');
    expect(demote.code).toBe(1);
    expect(demote.stderr).toMatch(/last owner/);

    expect((await cli('users', 'add', 'second@cli.test', '--role', 'owner')).code).toBe(0);
    const token = (await cli('tokens', 'create', '--user', 'second@cli.test')).stdout.split('\n')[0] ?? '';
    expect((await api(tp, 'GET', '/v1/organizations/default-org/members', { token })).status).toBe(200);
    expect((await cli('users', 'remove', 'second@cli.test', '--org', 'default-org')).code).toBe(0);
    expect((await api(tp, 'GET', '/v1/organizations/default-org/members', { token })).status).toBe(403);
    expect((await cli('users', 'remove', 'second@cli.test')).code).toBe(0);
    expect((await api(tp, 'GET', '/v1/organizations', { token })).status).toBe(401);
    const gone = await cli('users', 'remove', 'second@cli.test');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/no user second@cli.test/);
  });
});
