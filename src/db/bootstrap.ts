/** Project database bootstrap: the versioned files in sql/project applied by the migration runner. */
import type pg from 'pg';
import { firstRow } from './first-row.js';
import { loadMigrations, migrate } from './migrate.js';
import { sqlPath } from './sql-dir.js';
import { quoteIdent } from './sql-text.js';

export async function bootstrapProjectDatabase(client: pg.ClientBase): Promise<string[]> {
  const { db } = firstRow(
    await client.query<{ db: string }>('select current_database() as db'),
    'select current_database()',
  );
  return migrate(client, loadMigrations(sqlPath('project')), {
    schema: 'strata_meta',
    table: 'project_migrations',
    substitutions: { database: quoteIdent(db) },
  });
}
