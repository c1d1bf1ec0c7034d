/** `strata serve`: one existing database's GraphQL API, standalone (library form and the CLI end to end). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  createTestDatabase,
  connect,
  authenticatorPassword,
  type TestDatabase,
} from '../../support/database.js';
import { serveDatabase } from '../../../src/graphql/http/standalone.js';
import { verifyJwt } from '../../../src/auth/jwt.js';
import { freeTestPort } from '../../support/free-port.js';
import { repoRoot as root, servingBanner, spawnCli } from '../../support/strata-process.js';
import { http, postGraphQL } from '../../support/graphql.js';

let db: TestDatabase;

beforeAll(async () => {
  // An existing database that never saw the project migrations: serve brings the engine's objects itself.
  db = await createTestDatabase({ prefix: 'gqlserve', bootstrap: false });
  const c = await connect(db.url);
  await c.query(`
    create table public.city (id int primary key, name text not null);
    insert into public.city values (1, 'Lyon'), (2, 'Porto');
    grant usage on schema public to anon, service_role;
    grant select on public.city to anon, service_role;`);
  await c.end();
});

afterAll(async () => {
  await db?.drop();
});

const Q = { query: '{ cityCollection(orderBy: [{id: AscNullsLast}]) { edges { node { name } } } }' };
const EXPECTED = {
  data: { cityCollection: { edges: [{ node: { name: 'Lyon' } }, { node: { name: 'Porto' } }] } },
};

describe('serveDatabase (library)', () => {
  it('bootstraps, mints keys from the secret and serves /graphql/v1', async () => {
    const secret = randomBytes(32).toString('hex');
    const s = await serveDatabase({
      databaseUrl: db.url,
      jwtSecret: secret,
      port: 0,
      authenticatorPassword,
      extensionDir: false,
    });
    try {
      expect(s.install).toMatchObject({ mode: 'sql' });
      expect((await verifyJwt(secret, s.anonKey)).role).toBe('anon');
      expect((await verifyJwt(secret, s.serviceRoleKey)).role).toBe('service_role');
      const r = await postGraphQL(s.graphqlUrl, Q, { apikey: s.anonKey });
      expect(r.status).toBe(200);
      expect(r.json).toEqual(EXPECTED);
      expect((await postGraphQL(s.graphqlUrl, Q, { apikey: 'nope' })).status).toBe(401);
      expect((await postGraphQL(s.graphqlUrl + '/', Q, { apikey: s.anonKey })).status).toBe(404);
      // The API logs in as authenticator when its password is given.
      const c = await connect(db.url);
      const who = await c.query(
        `select count(*)::int as n from pg_stat_activity where datname = $1 and usename = 'authenticator'`,
        [db.name],
      );
      await c.end();
      expect(who.rows[0].n).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });
});

describe('strata serve (CLI)', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it('prints the URL and keys, serves, and stops on SIGTERM', async () => {
    const port = await freeTestPort();
    const secret = randomBytes(32).toString('hex');
    const p = spawnCli(
      [
        join(root, 'test/graphql/http/cli-entry.ts'),
        '--',
        'serve',
        '--database-url',
        db.url,
        '--jwt-secret',
        secret,
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--extension-dir',
        'none',
        '--max-depth',
        '4',
      ],
      {
        command: join(root, 'node_modules/.bin/vite-node'),
        cwd: root,
        env: { ...process.env, DATABASE_URL: '' },
      },
    );
    child = p.child;
    const out = await servingBanner(p, { timeoutMs: 30_000, name: 'strata serve' });
    const url = /GraphQL URL: (\S+)/.exec(out)![1]!;
    const anonKey = /anon key: (\S+)/.exec(out)![1]!;
    const serviceKey = /service_role key: (\S+)/.exec(out)![1]!;
    expect(url).toBe(`http://127.0.0.1:${port}/graphql/v1`);
    expect((await verifyJwt(secret, anonKey)).role).toBe('anon');
    expect((await verifyJwt(secret, serviceKey)).role).toBe('service_role');

    expect((await postGraphQL(url, Q, { apikey: anonKey })).json).toEqual(EXPECTED);
    expect((await postGraphQL(url, Q, { apikey: serviceKey })).json).toEqual(EXPECTED);
    expect((await postGraphQL(url, Q)).status).toBe(401);
    expect((await http(url, { headers: { accept: 'text/html' } })).status).toBe(200);
    // --max-depth 4
    expect((await postGraphQL(url, Q, { apikey: anonKey })).json.errors).toBeUndefined();
    expect(
      (await postGraphQL(url, { query: '{ a { b { c { d { e } } } } }' }, { apikey: anonKey })).json.errors[0]
        .message,
    ).toMatch(/depth 5 exceeds the maximum allowed depth of 4/);

    const code = await new Promise<number | null>((resolve) => {
      child!.once('exit', (c) => resolve(c));
      child!.kill('SIGTERM');
    });
    expect(code).toBe(0);
    child = undefined;
  });

  it('refuses to start without --jwt-secret', async () => {
    const p = spawn(
      join(root, 'node_modules/.bin/vite-node'),
      [join(root, 'test/graphql/http/cli-entry.ts'), '--', 'serve', '--database-url', db.url],
      {
        cwd: root,
        env: { ...process.env, DATABASE_URL: '', STRATA_JWT_SECRET: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let err = '';
    p.stderr!.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => p.once('exit', resolve));
    expect(code).not.toBe(0);
    expect(err).toMatch(/--jwt-secret/);
  });
});
