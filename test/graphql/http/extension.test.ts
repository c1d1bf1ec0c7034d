/**
 * The engine's database objects as a PostgreSQL extension (embedded server: its extension folder
 * is ours to write) and as plain SQL (any server), and an upgrade by drop + create while the HTTP
 * API keeps answering.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, connect, type TestDatabase } from '../../support/database.js';
import { embeddedExtensionDir } from '../../../src/db/embedded.js';
import { installGraphQL, installedVersion } from '../../../src/graphql/extension/install.js';
import {
  extensionFilePaths,
  removeExtensionFiles,
  EXTENSION_COMMENT,
} from '../../../src/graphql/extension/extension-files.js';
import { STRATA_VERSION } from '../../../src/graphql/extension/version.js';
import { createGraphQLHandler } from '../../../src/graphql/http/handler.js';
import { createPool } from '../../../src/db/pool.js';
import { mintApiKey } from '../../../src/auth/jwt.js';
import { listen } from './support.js';
import { postGraphQL } from '../../support/graphql.js';

const embedded = inject('embeddedDataDir') !== '';

describe('plain SQL install (servers whose extension folder is not ours)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'gqlplain' });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('installs the objects, reports the version through graphql.strata_version(), and is idempotent', async () => {
    const c = await connect(db.url);
    try {
      const first = await installGraphQL(c, { extensionDir: false });
      expect(first).toMatchObject({ mode: 'sql', version: STRATA_VERSION });
      expect(await installedVersion(c)).toBe(STRATA_VERSION);
      expect((await c.query(`select graphql.strata_version() as v`)).rows[0].v).toBe(STRATA_VERSION);
      const schemaVersion = async () =>
        Number((await c.query('select graphql.get_schema_version() as v')).rows[0].v);
      const before = await schemaVersion();
      const again = await installGraphQL(c, { extensionDir: false });
      expect(again).toMatchObject({ mode: 'sql', version: STRATA_VERSION, action: 'unchanged' });
      // Nothing re-run: cached schemas stay valid.
      expect(await schemaVersion()).toBe(before);
      expect(
        (await c.query(`select count(*)::int as n from pg_extension where extname like 'strata_graphql%'`))
          .rows[0].n,
      ).toBe(0);
      // The engine's objects are there.
      expect((await c.query(`select graphql.get_schema_version() is not null as ok`)).rows[0].ok).toBe(true);
      const upgraded = await installGraphQL(c, { extensionDir: false, version: '99.0.0' });
      expect(upgraded).toMatchObject({
        mode: 'sql',
        version: '99.0.0',
        action: 'replaced',
        previousVersion: STRATA_VERSION,
      });
      expect(await installedVersion(c)).toBe('99.0.0');
    } finally {
      await c.end();
    }
  });
});

describe("a folder that is not the server's extension folder", () => {
  it('is refused (explicit) and left as it was', async () => {
    const db = await createTestDatabase({ prefix: 'gqlnotdir' });
    const dir = mkdtempSync(join(tmpdir(), 'strata-not-extdir-'));
    const c = await connect(db.url);
    try {
      await expect(
        installGraphQL(c, { extensionDir: dir, name: 'strata_graphql_nowhere', version: '1.0.0' }),
      ).rejects.toThrow(/does not see the extension files/);
      expect(readdirSync(dir)).toEqual([]);
      expect(
        (
          await c.query(
            `select count(*)::int as n from pg_extension where extname = 'strata_graphql_nowhere'`,
          )
        ).rows[0].n,
      ).toBe(0);
    } finally {
      await c.end();
      rmSync(dir, { recursive: true, force: true });
      await db.drop();
    }
  });
});

describe.skipIf(!embedded)('as a PostgreSQL extension (embedded server)', () => {
  // A name of this test's own: the extension folder is shared by every server using these binaries.
  const name = `strata_graphql_t${randomBytes(4).toString('hex')}`;
  let dir: string;
  let db: TestDatabase;

  beforeAll(async () => {
    dir = await embeddedExtensionDir();
    db = await createTestDatabase({ prefix: 'gqlext' });
  });

  afterAll(async () => {
    await db?.drop();
    for (const v of ['1.0.0', '1.1.0', '1.2.0']) removeExtensionFiles(dir, name, v);
  });

  it('is listed by pg_available_extensions with name, versions and comment, and can be upgraded by drop + create while the API answers', async () => {
    const c = await connect(db.url);
    const pool = createPool(db.apiUrl, { max: 6 });
    let srv: Awaited<ReturnType<typeof listen>> | undefined;
    try {
      // 1.0.0 replaces the plain objects the project migrations made.
      const first = await installGraphQL(c, { extensionDir: dir, name, version: '1.0.0' });
      expect(first).toMatchObject({ mode: 'extension', name, version: '1.0.0', action: 'installed' });
      expect(existsSync(extensionFilePaths(dir, name, '1.0.0').control)).toBe(true);
      const listed = (
        await c.query(
          'select name, default_version, installed_version, comment from pg_available_extensions where name = $1',
          [name],
        )
      ).rows[0];
      expect(listed).toEqual({
        name,
        default_version: '1.0.0',
        installed_version: '1.0.0',
        comment: EXTENSION_COMMENT,
      });
      expect(await installedVersion(c)).toBe('1.0.0');
      const members = (
        await c.query(
          `select count(*)::int as n from pg_depend d join pg_extension e on e.oid = d.refobjid where e.extname = $1 and d.deptype = 'e'`,
          [name],
        )
      ).rows[0].n;
      expect(members).toBeGreaterThan(3);
      expect((await installGraphQL(c, { extensionDir: dir, name, version: '1.0.0' })).action).toBe(
        'unchanged',
      );

      await c.query(`create table public.item (id int primary key, label text); insert into public.item values (1, 'one'), (2, 'two');
        grant select on public.item to anon;`);
      const secret = randomBytes(24).toString('hex');
      const anonKey = await mintApiKey(secret, 'anon', 'extref');
      srv = await listen(createGraphQLHandler({ pool, jwtSecret: secret, anonKey }));
      const url = srv.url + '/graphql/v1';
      const query = {
        query: '{ itemCollection(orderBy: [{id: AscNullsLast}]) { edges { node { label } } } }',
      };
      const expected = {
        data: { itemCollection: { edges: [{ node: { label: 'one' } }, { node: { label: 'two' } }] } },
      };
      expect((await postGraphQL(url, query, { apikey: anonKey })).json).toEqual(expected);
      const versionBefore = Number((await c.query('select graphql.get_schema_version() as v')).rows[0].v);

      // Loops of requests while 1.1.0 is written and installed.
      let running = true;
      const outcomes: Array<{ status: number; ok: boolean; body: string }> = [];
      // Four clients, each sending requests back to back.
      const loop = Promise.all(
        [0, 1, 2, 3].map(async () => {
          while (running) {
            const r = await postGraphQL(url, query, { apikey: anonKey }).catch((e: Error) => ({
              status: 0,
              json: undefined,
              text: String(e),
            }));
            outcomes.push({
              status: r.status,
              ok: r.status === 200 && JSON.stringify(r.json) === JSON.stringify(expected),
              body: r.text,
            });
          }
        }),
      );
      await new Promise((r) => setTimeout(r, 200));
      const upgraded = await installGraphQL(c, { extensionDir: dir, name, version: '1.1.0' });
      await new Promise((r) => setTimeout(r, 300));
      running = false;
      await loop;

      expect(upgraded).toMatchObject({
        mode: 'extension',
        version: '1.1.0',
        action: 'replaced',
        previousVersion: '1.0.0',
      });
      const after = (
        await c.query(
          'select default_version, installed_version from pg_available_extensions where name = $1',
          [name],
        )
      ).rows[0];
      expect(after).toEqual({ default_version: '1.1.0', installed_version: '1.1.0' });
      expect(await installedVersion(c)).toBe('1.1.0');
      // Cached schemas are invalidated: the version moved forward, not back to 1.
      expect(Number((await c.query('select graphql.get_schema_version() as v')).rows[0].v)).toBeGreaterThan(
        versionBefore,
      );

      // No request lost: each either succeeded or got a clear transient answer.
      expect(outcomes.length).toBeGreaterThan(5);
      const failures = outcomes.filter((o) => !o.ok);
      for (const f of failures) {
        expect(f.status, f.body).toBe(503);
        expect(f.body).toMatch(/retry/i);
      }
      // And everything succeeds afterwards.
      for (let i = 0; i < 5; i++)
        expect((await postGraphQL(url, query, { apikey: anonKey })).json).toEqual(expected);
      // DDL is still tracked by the new extension's event triggers.
      const v1 = Number((await c.query('select graphql.get_schema_version() as v')).rows[0].v);
      await c.query('comment on table public.item is $$items$$');
      expect(Number((await c.query('select graphql.get_schema_version() as v')).rows[0].v)).toBeGreaterThan(
        v1,
      );
      console.log(
        `extension upgrade: ${outcomes.length} requests during the swap, ${failures.length} transient failures`,
      );

      // A database object that depends on the extension blocks the swap: the installed version stays, with a warning.
      await c.query('create view public.engine_version as select graphql.strata_version() as v');
      const blocked = await installGraphQL(c, { extensionDir: dir, name, version: '1.2.0' });
      expect(blocked).toMatchObject({ mode: 'extension', version: '1.1.0', action: 'unchanged' });
      expect(blocked.warning).toMatch(/1\.2\.0 not installed, 1\.1\.0 kept/);
      expect((await postGraphQL(url, query, { apikey: anonKey })).json).toEqual(expected);
      await c.query('drop view public.engine_version');
      expect(await installGraphQL(c, { extensionDir: dir, name, version: '1.2.0' })).toMatchObject({
        action: 'replaced',
        version: '1.2.0',
      });
    } finally {
      await srv?.close();
      await pool.end();
      await c.end();
    }
  });
});

describe.skipIf(!embedded)("extensionDir 'auto' (embedded server)", () => {
  const name = `strata_graphql_a${randomBytes(4).toString('hex')}`;
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'gqlauto' });
  });
  afterAll(async () => {
    await db?.drop();
    removeExtensionFiles(await embeddedExtensionDir(), name, '2.0.0');
  });

  it("finds the server's extension folder from pg_config and installs the extension there", async () => {
    const c = await connect(db.url);
    try {
      const report = await installGraphQL(c, { extensionDir: 'auto', name, version: '2.0.0' });
      expect(report).toMatchObject({ mode: 'extension', version: '2.0.0', action: 'installed' });
      expect(existsSync(extensionFilePaths(await embeddedExtensionDir(), name, '2.0.0').script)).toBe(true);
      expect(
        (await c.query('select extversion from pg_extension where extname = $1', [name])).rows[0].extversion,
      ).toBe('2.0.0');
    } finally {
      await c.end();
    }
  });
});

describe("extensionDir 'embedded' (the default of strata serve and the platform)", () => {
  const name = `strata_graphql_e${randomBytes(4).toString('hex')}`;
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'gqlembmode' });
  });
  afterAll(async () => {
    await db?.drop();
    removeExtensionFiles(await embeddedExtensionDir(), name, '3.0.0');
  });

  it(
    embedded
      ? 'is an extension on the embedded server'
      : 'is plain SQL on a server that is not the embedded one',
    async () => {
      const c = await connect(db.url);
      try {
        const report = await installGraphQL(c, { extensionDir: 'embedded', name, version: '3.0.0' });
        expect(report).toMatchObject({
          mode: embedded ? 'extension' : 'sql',
          version: '3.0.0',
          action: 'installed',
        });
        expect(await installedVersion(c)).toBe('3.0.0');
      } finally {
        await c.end();
      }
    },
  );
});
