/** `strata sdl` and printSchemaSdl(): the reflected schema as SDL, per role and search_path. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { printSchema } from 'graphql';
import { createTestDatabase, connect, type TestDatabase } from '../../support/database.js';
import { installGraphQL } from '../../../src/graphql/extension/install.js';
import { printSchemaSdl } from '../../../src/graphql/http/sdl.js';
import { buildGraphQLSchema } from '../../../src/graphql/engine.js';

const root = new URL('../../../', import.meta.url).pathname;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      join(root, 'node_modules/.bin/vite-node'),
      [join(root, 'test/graphql/http/cli-entry.ts'), '--', ...args],
      { cwd: root, env: { ...process.env, DATABASE_URL: '' } },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'gqlsdl' });
  const c = await connect(db.url);
  await installGraphQL(c, { extensionDir: false });
  await c.query(`
    create schema shop;
    grant usage on schema shop to anon, service_role;
    create table public.book (id int primary key, title text);
    create table shop.product (id int primary key, name text);
    grant select on public.book to anon;
    grant select on shop.product to service_role;`);
  await c.end();
});

afterAll(async () => {
  await db?.drop();
});

describe('printSchemaSdl', () => {
  it('prints the schema the role sees on the given search_path', async () => {
    const anon = await printSchemaSdl(db.url, { role: 'anon', schemas: ['public'] });
    expect(anon).toContain('bookCollection');
    expect(anon).not.toContain('productCollection');
    const svc = await printSchemaSdl(db.url, { role: 'service_role', schemas: ['shop'] });
    expect(svc).toContain('productCollection');
    expect(svc).not.toContain('bookCollection');
  });

  it("is graphql-js printSchema of the engine's buildGraphQLSchema", async () => {
    const c = await connect(db.url);
    let expected: string;
    try {
      await c.query('begin');
      await c.query('set local role anon');
      await c.query('set local search_path to public');
      expected = printSchema(await buildGraphQLSchema(c));
      await c.query('rollback');
    } finally {
      await c.end();
    }
    expect(await printSchemaSdl(db.url, { role: 'anon', schemas: ['public'] })).toBe(expected);
  });

  it('an unknown role is an error', async () => {
    await expect(printSchemaSdl(db.url, { role: 'no_such_role' })).rejects.toThrow(/no_such_role/);
  });
});

describe('strata sdl', () => {
  it('prints the SDL and exits 0', async () => {
    const r = await cli([
      'sdl',
      '--database-url',
      db.url,
      '--role',
      'service_role',
      '--schemas',
      'public,shop',
    ]);
    expect(r.stderr.replace(/npm warn.*\n/g, '')).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('type Query');
    expect(r.stdout).toContain('productCollection');
    expect(r.stdout).toBe(
      (await printSchemaSdl(db.url, { role: 'service_role', schemas: ['public', 'shop'] })) + '\n',
    );
  });

  it('defaults to the connecting role', async () => {
    const r = await cli(['sdl', '--database-url', db.url, '--schemas', 'public,shop']);
    expect(r.code).toBe(0);
    // the superuser of the test database sees both schemas' tables
    expect(r.stdout).toContain('bookCollection');
    expect(r.stdout).toContain('productCollection');
  });

  it('fails with a message without --database-url', async () => {
    const r = await cli(['sdl']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/--database-url/);
  });
});
