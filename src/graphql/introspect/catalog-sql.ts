/**
 * The one catalog query (sql/graphql/catalog.sql): everything the engine reflects, as one json
 * document, for the current role and search_path. Read once, when this module loads; its header
 * comment lines are not sent.
 */
import { readFileSync } from 'node:fs';
import { sqlPath } from '../../db/sql-dir.js';

export const CATALOG_SQL = readFileSync(sqlPath('graphql', 'catalog.sql'), 'utf8').replace(
  /^(?:--[^\n]*\n)+/,
  '',
);

/**
 * The fields of each column in the document's `rels[].columns`, in the order of the query's
 * `json_build_array(c.attnum, c.attname, …)`: a JSON array per column (keys written 6,000 times for
 * 1,000 tables doubled the document and the time PostgreSQL spent writing it); load.ts names them
 * with this list.
 */
export const COLUMN_NAMES = [
  'num',
  'name',
  'type',
  'typmod',
  'notNull',
  'generated',
  'hasDefault',
  'serial',
  'comment',
  'select',
  'insert',
  'update',
  'nullFree',
] as const;
