/** The reflected schema as SDL, for one role and search_path: printSchemaSdl, and the CLI around it (`strata sdl`). */
import { parseArgs } from 'node:util';
import { printSchema } from 'graphql';
import { checkedDatabaseUrl, standaloneEnv } from '../../config.js';
import { withClient } from '../../db/pool.js';
import { quoteIdent, quoteLiteral } from '../../db/sql-text.js';
import { reflectSchema } from '../engine.js';

export interface SdlOptions {
  /** The role whose privileges shape the schema (default: the connecting role itself). */
  role?: string;
  /** The search_path the schema is reflected from (default: the database's own search_path). */
  schemas?: string[];
  /** Told what a person should fix (enum labels that need a `mappings` directive...). */
  onWarning?: (message: string) => void;
}

/**
 * Connects with `databaseUrl`, optionally `set role`s to `role`, reflects the catalog and prints
 * it. Works on any database (Strata's own objects are not needed) inside a read-only transaction
 * that is rolled back: it changes nothing.
 */
export async function printSchemaSdl(databaseUrl: string, opts: SdlOptions = {}): Promise<string> {
  const role = opts.role?.trim() || undefined;
  const schemas = (opts.schemas ?? []).map((s) => s.trim()).filter(Boolean);
  return withClient(databaseUrl, async (client) => {
    await client.query('begin read only');
    try {
      if (role !== undefined) {
        await client.query(`set local role ${quoteIdent(role)}`);
        await client.query(
          `select set_config('request.jwt.claims', ${quoteLiteral(JSON.stringify({ role }))}, true)`,
        );
      }
      if (schemas.length)
        await client.query(`set local search_path to ${schemas.map(quoteIdent).join(', ')}`);
      const { schema, warnings } = await reflectSchema(client, { omitInvalidEnumValues: true });
      for (const w of warnings) opts.onWarning?.(w);
      return printSchema(schema);
    } finally {
      await client.query('rollback').catch(() => {});
    }
  });
}

export async function sdlCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      'database-url': { type: 'string' },
      role: { type: 'string' },
      schemas: { type: 'string' },
    },
  });
  const databaseUrl = values['database-url'] ?? standaloneEnv().databaseUrl;
  if (!databaseUrl) throw new Error('strata sdl: --database-url (or DATABASE_URL) is required');
  checkedDatabaseUrl(databaseUrl, 'strata sdl: --database-url (or DATABASE_URL)');
  const sdl = await printSchemaSdl(databaseUrl, {
    role: values.role,
    schemas: values.schemas ? values.schemas.split(',') : undefined,
    onWarning: (m) => console.warn(`warning: ${m}`),
  });
  process.stdout.write(sdl.endsWith('\n') ? sdl : sdl + '\n');
}
