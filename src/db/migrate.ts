/**
 * A small migration runner: versioned `NNNN_name.sql` files applied in order, each in its own
 * transaction, recorded in a table; concurrent runners are serialised by an advisory lock, so a
 * second start waits and then finds nothing to do.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { quoteIdent } from './sql-text.js';

export interface Migration {
  version: string;
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrateOptions {
  /** Schema of the bookkeeping table (created if missing). */
  schema?: string;
  table?: string;
  /** Text substituted for `{{name}}` placeholders in the files (values are inserted as given: pass only trusted, already quoted text). */
  substitutions?: Record<string, string>;
}

const FILE = /^(\d{4,})_([\w.-]+)\.sql$/;

export function loadMigrations(dir: string): Migration[] {
  const migrations: Migration[] = [];
  for (const f of readdirSync(dir).sort()) {
    const match = FILE.exec(f);
    if (!match) continue;
    const [, version, name] = match;
    const sql = readFileSync(join(dir, f), 'utf8');
    migrations.push({ version, name, sql, checksum: createHash('sha256').update(sql).digest('hex') });
  }
  return migrations;
}

// A fixed key: one migration run at a time per database.
const LOCK_KEY = 0x5374_7261; // 'Stra'

/** Applies what is not yet applied; returns the versions applied by this call. */
export async function migrate(
  client: pg.ClientBase,
  migrations: Migration[],
  opts: MigrateOptions = {},
): Promise<string[]> {
  const schema = quoteIdent(opts.schema ?? 'strata_meta');
  const table = `${schema}.${quoteIdent(opts.table ?? 'migrations')}`;
  const lockNs = hashKey(`${opts.schema ?? 'strata_meta'}.${opts.table ?? 'migrations'}`);
  await client.query('select pg_advisory_lock($1, $2)', [LOCK_KEY, lockNs]);
  try {
    // Only when missing: even a no-op CREATE ... IF NOT EXISTS is DDL to event triggers (it would
    // bump a project's GraphQL schema version on every start of every node).
    const { rows: found } = await client.query<{ t: string | null }>('select to_regclass($1) as t', [table]);
    if (!found[0]?.t) await client.query(`create schema if not exists ${schema}`);
    if (!found[0]?.t)
      await client.query(
        `create table if not exists ${table} (
         version text primary key,
         name text not null,
         checksum text not null,
         applied_at timestamptz not null default now())`,
      );
    const done = new Set(
      (await client.query<{ version: string }>(`select version from ${table}`)).rows.map((r) => r.version),
    );
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      let sql = m.sql;
      for (const [k, v] of Object.entries(opts.substitutions ?? {})) sql = sql.split(`{{${k}}}`).join(v);
      await client.query('begin');
      try {
        await client.query(sql);
        await client.query(`insert into ${table} (version, name, checksum) values ($1, $2, $3)`, [
          m.version,
          m.name,
          m.checksum,
        ]);
        await client.query('commit');
      } catch (err) {
        await client.query('rollback');
        const msg = err instanceof Error ? err.message : String(err);
        throw new Error(`migration ${m.version}_${m.name} failed: ${msg}`);
      }
      applied.push(m.version);
    }
    return applied;
  } finally {
    await client.query('select pg_advisory_unlock($1, $2)', [LOCK_KEY, lockNs]).catch(() => {});
  }
}

function hashKey(s: string): number {
  return createHash('sha256').update(s).digest().readInt32BE(0);
}
