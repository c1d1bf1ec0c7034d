// Writes the copies of the GraphQL engine's database objects from their one source,
// sql/graphql/objects.sql: the project migration sql/project/0003_graphql_schema_version.sql.
// Run by scripts/build-if-needed.mjs (so by `npm run build`); `--check` only compares and exits 1
// when the copy is stale.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const source = join(root, 'sql', 'graphql', 'objects.sql');
const migration = join(root, 'sql', 'project', '0003_graphql_schema_version.sql');

/** The migration: every project database gets the engine's objects with its first bootstrap. */
export function migrationText(objectsSql) {
  return `-- GENERATED from sql/graphql/objects.sql by scripts/generate-engine-sql.mjs (npm run build):
-- edit that file, not this one. The GraphQL engine's objects, so that a project database has its
-- schema version from the first bootstrap; the engine's install replaces them when it runs.
create schema if not exists graphql;

${objectsSql}`;
}

export function generateEngineSql({ check = false } = {}) {
  const want = migrationText(readFileSync(source, 'utf8'));
  const have = existsSync(migration) ? readFileSync(migration, 'utf8') : undefined;
  if (have === want) return true;
  if (check) return false;
  writeFileSync(migration, want);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  if (!generateEngineSql({ check })) {
    process.stderr.write(
      'sql/project/0003_graphql_schema_version.sql is stale: run `npm run build` (it is generated from sql/graphql/objects.sql)\n',
    );
    process.exit(1);
  }
}
