/** The reflected schema as SDL, for one role and search_path (`strata sdl`). */
import { printSchema } from 'graphql';
import { withClient } from '../../db/pool.js';
import { quoteIdent, quoteLiteral } from '../../db/sql-text.js';
import { loadEngine } from './engine-port.js';

export interface SdlOptions {
  /** The role whose privileges shape the schema (default anon). */
  role?: string;
  /** The search_path the schema is reflected from (default: the database's own search_path). */
  schemas?: string[];
}

/** Connects with `databaseUrl` (a role that may `set role` to `role`), reflects, prints. Changes nothing. */
export async function printSchemaSdl(databaseUrl: string, opts: SdlOptions = {}): Promise<string> {
  const role = opts.role ?? 'anon';
  const schemas = (opts.schemas ?? []).map((s) => s.trim()).filter(Boolean);
  const engine = await loadEngine();
  return withClient(databaseUrl, async (client) => {
    await client.query('begin read only');
    try {
      await client.query(`set local role ${quoteIdent(role)}`);
      await client.query(
        `select set_config('request.jwt.claims', ${quoteLiteral(JSON.stringify({ role }))}, true)`,
      );
      if (schemas.length)
        await client.query(`set local search_path to ${schemas.map(quoteIdent).join(', ')}`);
      const schema = await engine.buildGraphQLSchema(client);
      return printSchema(schema);
    } finally {
      await client.query('rollback').catch(() => {});
    }
  });
}
