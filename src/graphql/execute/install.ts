/**
 * The engine's database-side objects (schema `graphql`: the schema version sequence and its event
 * triggers, exception/comment_directive helpers, the version guard, the schema state marker).
 * Their one source is sql/graphql/objects.sql, used as is: run here (installSchema), written into
 * the strata_graphql extension script (extension/install.ts), and copied at build time into the
 * project migration sql/project/0003_graphql_schema_version.sql (scripts/generate-engine-sql.mjs).
 */
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { sqlPath } from '../../db/sql-dir.js';

let objects: string | undefined;

/** The objects' SQL (without the schema itself: an extension's control file creates that). */
export function objectsSql(): string {
  objects ??= readFileSync(sqlPath('graphql', 'objects.sql'), 'utf8');
  return objects;
}

export async function install(client: pg.ClientBase): Promise<void> {
  await client.query(`create schema if not exists graphql;\n${objectsSql()}`);
}
