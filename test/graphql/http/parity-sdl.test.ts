/**
 * `strata sdl` offline: on a database Strata never touched (no `anon` role, no `graphql` schema) it
 * reads the catalog in a read-only transaction as the connecting role or any existing --role, and
 * prints the schema; enum labels that are not GraphQL names are named in a warning (stderr) and left
 * out of the printed SDL so it stays valid.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { buildSchema } from 'graphql';
import { randomBytes } from 'node:crypto';
import { withClient, withDatabase, withUser } from '../../../src/db/pool.js';
import { quoteIdent } from '../../../src/db/sql-text.js';
import { serverUrl } from '../../support/database.js';
import { printSchemaSdl } from '../../../src/graphql/http/sdl.js';

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

const suffix = randomBytes(4).toString('hex');
const dbName = `gqlsdl_fresh_${suffix}`;
const reader = `sdl_reader_${suffix}`;
const owner = `sdl_owner_${suffix}`;
let url: string;
let ownerUrl: string;

beforeAll(async () => {
  const server = serverUrl();
  await withClient(withDatabase(server, 'postgres'), async (c) => {
    await c.query(`create database ${quoteIdent(dbName)} template template0`);
    await c.query(`create role ${quoteIdent(reader)} nologin`);
    await c.query(`create role ${quoteIdent(owner)} login password 'pw'`);
  });
  url = withDatabase(server, dbName);
  ownerUrl = withUser(url, owner, 'pw');
  // A plain database: no Strata bootstrap, no anon role grants, no graphql schema.
  await withClient(url, (c) =>
    c.query(`
      grant create, usage on schema public to ${quoteIdent(owner)};
      create type rating as enum ('G', 'PG-13', 'NC 17');
      create table film (id int primary key, title text, rating rating);
      create table secret (id int primary key, body text);
      grant usage on schema public to ${quoteIdent(reader)};
      grant select on film to ${quoteIdent(reader)};
      alter table film owner to ${quoteIdent(owner)};
    `),
  );
});

afterAll(async () => {
  await withClient(withDatabase(serverUrl(), 'postgres'), async (c) => {
    await c.query(`drop database if exists ${quoteIdent(dbName)} with (force)`);
    await c.query(`drop role if exists ${quoteIdent(reader)}`);
    await c.query(`drop role if exists ${quoteIdent(owner)}`);
  });
});

async function fingerprint(): Promise<string> {
  return withClient(url, async (c) => {
    const r = await c.query(
      `select (select count(*) from pg_namespace where nspname = 'graphql') as g,
              (select count(*) from pg_class) as rels, (select count(*) from pg_proc) as procs,
              (select coalesce(max(xmin::text::bigint), 0) from pg_class) as x`,
    );
    return JSON.stringify(r.rows[0]);
  });
}

describe('strata sdl on a database Strata never touched', () => {
  it('works as the connecting role, writes nothing, and the SDL parses', async () => {
    const before = await fingerprint();
    const warnings: string[] = [];
    const sdl = await printSchemaSdl(url, { onWarning: (w) => warnings.push(w) });
    expect(sdl).toContain('filmCollection');
    expect(sdl).toContain('secretCollection');
    expect(() => buildSchema(sdl)).not.toThrow();
    expect(await fingerprint()).toBe(before);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"PG-13"');
    expect(warnings[0]).toContain('"NC 17"');
    expect(warnings[0]).toContain('mappings');
    // the invalid labels are left out of the printed enum, the valid one stays
    expect(sdl).toMatch(/enum rating \{\s+G\s+\}/);
  });

  it('works for any existing role given with --role (its privileges shape the schema)', async () => {
    const sdl = await printSchemaSdl(url, { role: reader });
    expect(sdl).toContain('filmCollection');
    expect(sdl).not.toContain('secretCollection');
  });

  it('works when connecting as an ordinary login role', async () => {
    const sdl = await printSchemaSdl(ownerUrl);
    expect(sdl).toContain('filmCollection');
    expect(sdl).not.toContain('secretCollection');
  });

  it('a role that does not exist is a clear error', async () => {
    await expect(printSchemaSdl(url, { role: `no_role_${suffix}` })).rejects.toThrow(
      new RegExp(`role "no_role_${suffix}" does not exist`),
    );
  });

  it('a --database-url that is not a postgresql:// URL is said so (without repeating it), exit 1', async () => {
    const r = await cli(['sdl', '--database-url', 'localhost:5432/secret-pass']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('must be a postgresql:// URL');
    expect(r.stderr).not.toContain('secret-pass');
  });

  it('the CLI prints the SDL on stdout and the warning on stderr', async () => {
    const r = await cli(['sdl', '--database-url', url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('type Query');
    expect(r.stdout).toContain('filmCollection');
    expect(r.stderr).toMatch(/warning: enum public\.rating .*"PG-13".*mappings/);
  });
});
