import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { createTestDatabase, connect, type TestDatabase } from '../support/database.js';
import { loadMigrations, migrate } from '../../src/db/migrate.js';
import { bootstrapProjectDatabase } from '../../src/db/bootstrap.js';

let db: TestDatabase;
let dir: string;

beforeAll(async () => {
  db = await createTestDatabase({ bootstrap: false });
  dir = mkdtempSync(join(tmpdir(), 'strata-migrations-'));
  writeFileSync(join(dir, '0001_create.sql'), 'create table t (id int primary key, v text);');
  // Slow on purpose, so concurrent runners overlap.
  writeFileSync(join(dir, '0002_seed.sql'), "select pg_sleep(0.3); insert into t values (1, 'one');");
  writeFileSync(join(dir, 'README.md'), 'not a migration');
});
afterAll(async () => {
  await db.drop();
});

async function withClients<T>(n: number, work: (cs: pg.Client[]) => Promise<T>): Promise<T> {
  const cs = await Promise.all(Array.from({ length: n }, () => connect(db.url)));
  try {
    return await work(cs);
  } finally {
    await Promise.all(cs.map((c) => c.end()));
  }
}

describe('migration runner', () => {
  it('reads only NNNN_name.sql files, in order', () => {
    expect(loadMigrations(dir).map((m) => `${m.version}_${m.name}`)).toEqual(['0001_create', '0002_seed']);
  });

  it('serialises concurrent starts: every file applied exactly once', async () => {
    const results = await withClients(3, (cs) =>
      Promise.all(cs.map((c) => migrate(c, loadMigrations(dir), { table: 'test_migrations' }))),
    );
    expect(results.flat().sort()).toEqual(['0001', '0002']);
    await withClients(1, async ([c]) => {
      expect((await c!.query('select count(*)::int as n from t')).rows[0].n).toBe(1);
      const rec = await c!.query('select version, name from strata_meta.test_migrations order by version');
      expect(rec.rows).toEqual([
        { version: '0001', name: 'create' },
        { version: '0002', name: 'seed' },
      ]);
    });
  });

  it('re-running is a no-op', async () => {
    const applied = await withClients(1, ([c]) =>
      migrate(c!, loadMigrations(dir), { table: 'test_migrations' }),
    );
    expect(applied).toEqual([]);
  });

  it('a failing file is rolled back whole and not recorded; later files wait', async () => {
    writeFileSync(join(dir, '0003_bad.sql'), "insert into t values (2, 'two'); select 1/0;");
    writeFileSync(join(dir, '0004_after.sql'), "insert into t values (4, 'four');");
    await withClients(1, async ([c]) => {
      await expect(migrate(c!, loadMigrations(dir), { table: 'test_migrations' })).rejects.toThrow(
        /0003_bad failed: division by zero/,
      );
      expect((await c!.query('select id from t order by id')).rows).toEqual([{ id: 1 }]);
      expect((await c!.query('select max(version) as v from strata_meta.test_migrations')).rows[0].v).toBe(
        '0002',
      );
    });
  });

  it('the project bootstrap is idempotent', async () => {
    const first = await withClients(1, ([c]) => bootstrapProjectDatabase(c!));
    expect(first.length).toBeGreaterThan(0);
    const again = await withClients(2, (cs) => Promise.all(cs.map((c) => bootstrapProjectDatabase(c))));
    expect(again.flat()).toEqual([]);
  });

  it('the bootstrap gives auth helpers and a schema version bumped by DDL', async () => {
    await withClients(1, async ([c]) => {
      const v1 = (await c!.query('select graphql.get_schema_version() as v')).rows[0].v;
      await c!.query('create table bump_me (id int)');
      await c!.query("comment on table bump_me is 'x'");
      const v2 = (await c!.query('select graphql.get_schema_version() as v')).rows[0].v;
      expect(v2).toBeGreaterThanOrEqual(v1 + 2);
      await c!.query(
        `select set_config('request.jwt.claims', '{"sub":"11111111-1111-1111-1111-111111111111","role":"authenticated"}', false)`,
      );
      const r = (
        await c!.query('select auth.uid()::text as uid, auth.role() as role, auth.jwt() ->> $1 as sub', [
          'sub',
        ])
      ).rows[0];
      expect(r).toEqual({
        uid: '11111111-1111-1111-1111-111111111111',
        role: 'authenticated',
        sub: '11111111-1111-1111-1111-111111111111',
      });
    });
  });

  it('tables created in public are usable by the API roles (default privileges)', async () => {
    await withClients(1, async ([c]) => {
      await c!.query('create table pub_t (id serial primary key, v text)');
      for (const role of ['anon', 'authenticated', 'service_role']) {
        const r = await c!.query(
          "select has_table_privilege($1, 'public.pub_t', 'select, insert, update, delete') as ok, has_sequence_privilege($1, 'public.pub_t_id_seq', 'usage') as seq",
          [role],
        );
        expect(r.rows[0]).toEqual({ ok: true, seq: true });
      }
      const roles = await c!.query(
        "select rolname, rolcanlogin, rolbypassrls from pg_roles where rolname in ('anon','authenticated','service_role','authenticator') order by rolname",
      );
      expect(roles.rows).toEqual([
        { rolname: 'anon', rolcanlogin: false, rolbypassrls: false },
        { rolname: 'authenticated', rolcanlogin: false, rolbypassrls: false },
        { rolname: 'authenticator', rolcanlogin: true, rolbypassrls: false },
        { rolname: 'service_role', rolcanlogin: false, rolbypassrls: true },
      ]);
    });
  });
});
