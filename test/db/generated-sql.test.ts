/**
 * The GraphQL engine's database objects have one source, sql/graphql/objects.sql: the engine
 * installs it as is, and the project migration 0003 is generated from it at build time
 * (scripts/generate-engine-sql.mjs) — a stale copy fails here.
 */
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { installSchemaSql } from '../../src/graphql/engine.js';
import { sqlPath } from '../../src/db/sql-dir.js';

const source = readFileSync(sqlPath('graphql', 'objects.sql'), 'utf8');

describe('the engine objects SQL', () => {
  it('is what the engine installs', () => {
    expect(installSchemaSql()).toBe(source);
  });

  it('is copied unchanged into the project migration, which is up to date', () => {
    const migration = readFileSync(sqlPath('project', '0003_graphql_schema_version.sql'), 'utf8');
    expect(migration.endsWith(`\n${source}`)).toBe(true);
    expect(migration).toMatch(/^-- GENERATED from sql\/graphql\/objects\.sql/);
    expect(() =>
      execFileSync(process.execPath, ['scripts/generate-engine-sql.mjs', '--check'], { stdio: 'pipe' }),
    ).not.toThrow();
  });
});
