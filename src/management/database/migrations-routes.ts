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
import { ApiError, badRequest } from '../http/errors.js';
import { projectOf } from '../http/project-access.js';
import { objectBody, rejectUnknownKeys, stringField } from '../http/validate.js';
import { withClient } from '../../db/pool.js';
import { quoteLiteral } from '../../db/sql-text.js';
import { runProjectQuery, SqlError } from './query-runner.js';

const CREATE_TABLE = `create schema if not exists supabase_migrations;
create table if not exists supabase_migrations.schema_migrations (version text not null primary key);
alter table supabase_migrations.schema_migrations add column if not exists statements text[];
alter table supabase_migrations.schema_migrations add column if not exists name text;`;

function timestampVersion(d = new Date()): string {
  return d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

export const migrationRoutes: ManagementModule = async (app, { platform }) => {
  app.get(
    '/projects/:ref/database/migrations',
    { config: { failureMessage: 'Failed to list database migrations' } },
    async (req) => {
      const ctx = await projectOf(req).context();
      return withClient(ctx.superuserUrl, async (c) => {
        const exists = await c.query(
          `select to_regclass('supabase_migrations.schema_migrations') is not null as e`,
        );
        if (!exists.rows[0]?.e) return [];
        const { rows } = await c.query<{ version: string; name: string | null }>(
          'select version, name from supabase_migrations.schema_migrations order by version',
        );
        return rows.map((r) => ({ version: r.version, name: r.name ?? '' }));
      });
    },
  );

  app.post(
    '/projects/:ref/database/migrations',
    { config: { failureMessage: 'Failed to apply database migration' } },
    async (req) => {
      const body = objectBody(req.body);
      rejectUnknownKeys(body, ['query', 'name', 'rollback']);
      const query = stringField(body, 'query', { required: true, minLength: 1 });
      const name = stringField(body, 'name', { maxLength: 256 }) ?? '';
      stringField(body, 'rollback');
      if (query.includes('\u0000') || name.includes('\u0000'))
        throw badRequest('query and name must not contain NUL characters');
      const ctx = await projectOf(req).context();
      const version = timestampVersion();
      const sql = `begin;\n${query}\n;\n${CREATE_TABLE}\ninsert into supabase_migrations.schema_migrations (version, name, statements) values (${quoteLiteral(version)}, ${quoteLiteral(name)}, array[${quoteLiteral(query)}]);\ncommit;`;
      try {
        await runProjectQuery(platform, ctx, { query: sql, readOnly: false });
      } catch (err) {
        if (err instanceof SqlError) throw new ApiError(400, err.message);
        throw err;
      }
      return {};
    },
  );
};
