/**
 * `GET|PUT /v1/projects/{ref}/config/database/postgres`: the settings that make sense per database,
 * read from and written with `ALTER DATABASE … SET` (in one transaction; PostgreSQL validates each
 * value against pg_settings, and a bad one answers 400 with its message). Server-wide settings of
 * the reference schema (shared_buffers, max_connections, …) are 400: every project shares the
 * server. `null` resets a setting; `restart_database` is accepted and ignored (nothing to restart).
 */
import type { ManagementModule } from '../http/module.js';
import { type TSchema, Type } from '@sinclair/typebox';
import { ApiError } from '../http/errors.js';
import { projectOf } from '../http/project-access.js';
import { Optional, Strict } from '../http/schemas.js';
import { quoteIdent, quoteLiteral } from '../../db/sql-text.js';
import { withSuperuserSession } from '../../db/superuser-session.js';

/** Per-database settings and whether the reference schema has them as integers. */
export const PER_DATABASE_SETTINGS: Record<string, 'string' | 'integer'> = {
  effective_cache_size: 'string',
  logical_decoding_work_mem: 'string',
  maintenance_work_mem: 'string',
  max_parallel_maintenance_workers: 'integer',
  max_parallel_workers_per_gather: 'integer',
  session_replication_role: 'string',
  statement_timeout: 'string',
  work_mem: 'string',
};

/** Settings of the reference schema that only exist server-wide. */
const SERVER_WIDE = [
  'checkpoint_timeout',
  'hot_standby_feedback',
  'max_connections',
  'max_locks_per_transaction',
  'max_parallel_workers',
  'max_replication_slots',
  'max_slot_wal_keep_size',
  'max_standby_archive_delay',
  'max_standby_streaming_delay',
  'max_wal_senders',
  'max_wal_size',
  'max_worker_processes',
  'shared_buffers',
  'track_activity_query_size',
  'track_commit_timestamp',
  'wal_keep_size',
  'wal_sender_timeout',
];

const PER_DATABASE_NAMES = Object.keys(PER_DATABASE_SETTINGS).join(', ');

/** The body: per-database settings (`null` resets one), `restart_database`, and no other key. */
const PostgresConfigBody = Strict({
  restart_database: Type.Optional(
    Type.Boolean({ messages: { type: 'restart_database must be a boolean value' } }),
  ),
  ...Object.fromEntries(
    Object.entries(PER_DATABASE_SETTINGS).map(([key, kind]): [string, TSchema] => [
      key,
      kind === 'integer'
        ? Optional(Type.Integer())
        : Optional(Type.String({ messages: { type: `${key} must be a string without NUL characters` } })),
    ]),
  ),
  ...Object.fromEntries(
    SERVER_WIDE.map((key): [string, TSchema] => [
      key,
      Type.Optional(
        Type.Never({
          messages: {
            not: `${key} is a server-wide setting; on Strata projects share a server and only per-database settings can be changed (${PER_DATABASE_NAMES})`,
          },
        }),
      ),
    ]),
  ),
});

async function readSettings(url: string): Promise<Record<string, string | number>> {
  return withSuperuserSession(url, async (c) => {
    const { rows } = await c.query<{ s: string }>(
      `select unnest(setconfig) as s from pg_db_role_setting
        where setrole = 0 and setdatabase = (select oid from pg_database where datname = current_database())`,
    );
    const out: Record<string, string | number> = {};
    for (const { s } of rows) {
      const i = s.indexOf('=');
      const name = s.slice(0, i);
      const kind = PER_DATABASE_SETTINGS[name];
      if (!kind) continue;
      const value = s.slice(i + 1);
      out[name] = kind === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
    }
    return out;
  });
}

export const postgresConfigRoutes: ManagementModule = async (app) => {
  app.get(
    '/projects/:ref/config/database/postgres',
    { config: { failureMessage: "Failed to retrieve project's Postgres config" } },
    async (req) => readSettings((await projectOf(req).context()).superuserUrl),
  );

  app.put(
    '/projects/:ref/config/database/postgres',
    {
      schema: { body: PostgresConfigBody },
      config: { failureMessage: "Failed to update project's Postgres config" },
    },
    async (req) => {
      const changes = Object.entries(req.body as Record<string, unknown>)
        .filter(([key]) => key !== 'restart_database')
        .map(([key, value]): [string, string | null] => [key, value === null ? null : String(value)]);
      const ctx = await projectOf(req).context();
      await withSuperuserSession(ctx.superuserUrl, async (c) => {
        const db = quoteIdent(ctx.dbName);
        await c.query('begin');
        try {
          for (const [key, value] of changes)
            await c.query(
              value === null
                ? `alter database ${db} reset ${quoteIdent(key)}`
                : `alter database ${db} set ${quoteIdent(key)} = ${quoteLiteral(value)}`,
            );
          await c.query('commit');
        } catch (err) {
          await c.query('rollback').catch(() => {});
          const e = err as { code?: string; message?: string };
          if (e.code?.startsWith('22') || e.code?.startsWith('42'))
            throw new ApiError(400, e.message ?? 'invalid value');
          throw err;
        }
      });
      return readSettings(ctx.superuserUrl);
    },
  );
};
