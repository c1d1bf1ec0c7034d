/** The project's tables and columns, for the SQL editor's completion (read through database/query). */
import type { SQLNamespace } from '@codemirror/lang-sql';
import { runSql } from './api';

const CATALOG_SQL = `select c.table_schema as schema, c.table_name as table, c.column_name as column
  from information_schema.columns c
 where c.table_schema not in ('pg_catalog', 'information_schema') and c.table_schema not like 'pg\\_%'
 order by c.table_schema, c.table_name, c.ordinal_position`;

/** `{ schema: { table: [columns] } }`: lang-sql completes `schema.table`, and `public` tables bare. */
export async function loadCatalog(ref: string): Promise<SQLNamespace> {
  const rows = (await runSql(ref, CATALOG_SQL, true)) as { schema: string; table: string; column: string }[];
  const out: Record<string, Record<string, string[]>> = {};
  for (const r of rows) {
    const tables = out[r.schema] ?? {};
    out[r.schema] = tables;
    const columns = tables[r.table] ?? [];
    tables[r.table] = columns;
    columns.push(r.column);
  }
  return out;
}
