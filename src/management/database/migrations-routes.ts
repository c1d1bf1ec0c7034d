/**
 * The migration history the Supabase CLI keeps in `supabase_migrations.schema_migrations`
 * (version text primary key, statements text[], name text — created by `supabase link`/`db push`,
 * or here on first apply):
 * - `GET /v1/projects/{ref}/database/migrations` → `[{version, name}]` ordered by version (`[]` before any);
 * - `POST /v1/projects/{ref}/database/migrations` `{query, name?}` → runs the SQL as the project's
 *   login and records it under a timestamp version, in one transaction; 200 `{}`; a PostgreSQL error
 *   is 400 and records nothing.
 */
import type { ManagementModule } from '../http/module.js';
import { Type } from '@sinclair/typebox';
import { projectOf } from '../http/project-access.js';
import { Optional, Strict } from '../http/schemas.js';
import { quoteLiteral } from '../../db/sql-text.js';
import { runCallerQuery, SqlError, sqlErrorOf } from './query-runner.js';
import { badRequestOn } from '../http/errors.js';
import { withProjectLoginSession } from './project-login-session.js';

const CREATE_TABLE = `create schema if not exists supabase_migrations;
create table if not exists supabase_migrations.schema_migrations (version text not null primary key);
alter table supabase_migrations.schema_migrations add column if not exists statements text[];
alter table supabase_migrations.schema_migrations add column if not exists name text;`;

const NewMigration = Strict({
  query: Type.String({ minLength: 1 }),
  name: Optional(Type.String({ maxLength: 256 })),
  rollback: Optional(Type.String()),
});

function timestampVersion(d = new Date()): string {
  return d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

export const migrationRoutes: ManagementModule = async (app, { platform }) => {
  app.get(
    '/projects/:ref/database/migrations',
    { config: { failureMessage: 'Failed to list database migrations' } },
    async (req) => {
      const ctx = await projectOf(req).context();
      // As the project's login: the schema (and whatever it holds) is the tenant's. What PostgreSQL
      // refuses it (a history table another role owns) is a 400 with PostgreSQL's words.
      return badRequestOn([SqlError], () =>
        withProjectLoginSession(platform, ctx, async (c) => {
          try {
            const exists = await c.query(
              `select pg_catalog.to_regclass('supabase_migrations.schema_migrations') is not null as e`,
            );
            if (!exists.rows[0]?.e) return [];
            const { rows } = await c.query<{ version: string; name: string | null }>(
              'select version, name from supabase_migrations.schema_migrations order by version',
            );
            return rows.map((r) => ({ version: r.version, name: r.name ?? '' }));
          } catch (err) {
            throw sqlErrorOf(err);
          }
        }),
      );
    },
  );

  app.post(
    '/projects/:ref/database/migrations',
    { schema: { body: NewMigration }, config: { failureMessage: 'Failed to apply database migration' } },
    async (req) => {
      const { query } = req.body;
      const name = req.body.name ?? '';
      const ctx = await projectOf(req).context();
      const version = timestampVersion();
      const sql = `begin;\n${query}\n;\n${CREATE_TABLE}\ninsert into supabase_migrations.schema_migrations (version, name, statements) values (${quoteLiteral(version)}, ${quoteLiteral(name)}, array[${quoteLiteral(query)}]);\ncommit;`;
      await runCallerQuery(platform, ctx, { query: sql, readOnly: false });
      return {};
    },
  );
};
