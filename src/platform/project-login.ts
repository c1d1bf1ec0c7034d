/**
 * Each project's own database login, named as the hosted pooler names it: `postgres.<ref>`.
 *
 * Roles are cluster-wide, so the hosted `postgres` role becomes one role per project:
 * - LOGIN with the password given at creation (`db_pass`), stored by PostgreSQL only (as a
 *   SCRAM verifier computed here, so the password never travels in SQL text);
 * - CONNECT, CREATE and TEMPORARY on its project's database only (CONNECT is revoked from PUBLIC on
 *   every project database; on the embedded server pg_hba.conf also rejects it elsewhere);
 * - owner of schema `public` and of storage's tables (hosted `postgres` is a member of their owner
 *   supabase_storage_admin: it may `create policy … on storage.objects`; no platform session more
 *   privileged than the tenant writes those tables, so the triggers it may add there fire only for
 *   the Storage API's own roles), usage of the platform's schemas,
 *   member of anon, authenticated and service_role (as hosted `postgres`) but WITHOUT the SET and
 *   INHERIT options (those roles are shared by every project of the server), BYPASSRLS;
 * - in the NOLOGIN group `strata_project_logins` (pg_hba.conf matches the group).
 *
 * A second, platform-internal login `strata_sql.<ref>` (member of the first, password derived from
 * the platform key, reachable from the loopback only) lets the Management API run SQL *as* the
 * project's login (`POST …/database/query`) without ever knowing the user's password, and without a
 * superuser session that SQL could `RESET ROLE` back to.
 *
 * A third, `strata_fn.<ref>` (password derived the same way, loopback only, CONNECT on its project's
 * database only), is the Edge Functions' `SUPABASE_DB_URL`: its sessions start as `postgres.<ref>`
 * (as the hosted URL logs in as `postgres`), and it may switch to anon, authenticated or service_role
 * (`set_config('role', …)` + `request.jwt.claims`, so RLS applies) — in its own database only.
 */
import { createHmac } from 'node:crypto';
import type pg from 'pg';
import { quoteIdent, quoteLiteral } from '../db/sql-text.js';
import { runRoleStatement } from '../db/roles.js';
import { scramSha256Verifier } from './scram-verifier.js';

export const PROJECT_LOGIN_GROUP = 'strata_project_logins';
const LOGIN_PREFIX = 'postgres';
const SQL_PREFIX = 'strata_sql';
const FUNCTION_PREFIX = 'strata_fn';

export function projectLoginRole(ref: string): string {
  return `${LOGIN_PREFIX}.${ref}`;
}

export function projectSqlRole(ref: string): string {
  return `${SQL_PREFIX}.${ref}`;
}

export function projectFunctionRole(ref: string): string {
  return `${FUNCTION_PREFIX}.${ref}`;
}

/** An internal login's password: derived from the platform key, never stored. */
function derivedPassword(platformKeyHex: string, purpose: string, ref: string): string {
  return createHmac('sha256', Buffer.from(platformKeyHex, 'hex')).update(`${purpose}:${ref}`).digest('hex');
}

export function projectSqlPassword(platformKeyHex: string, ref: string): string {
  return derivedPassword(platformKeyHex, 'strata-sql-role', ref);
}

export function projectFunctionPassword(platformKeyHex: string, ref: string): string {
  return derivedPassword(platformKeyHex, 'strata-function-role', ref);
}

/**
 * The default (local) project's login password, shown in the `npm start` banner and `strata status`
 * (`db_url`): derived from the platform key, so every node of a cluster shows the same one.
 */
export function defaultProjectPassword(platformKeyHex: string): string {
  return derivedPassword(platformKeyHex, 'strata-default-project-login', 'default');
}

/** Platform-internal logins of a project (pg_hba.conf: loopback only, own database only). */
export function projectInternalRoles(ref: string): string[] {
  return [projectSqlRole(ref), projectFunctionRole(ref)];
}

/** `PASSWORD …` clause: a verifier when it can be computed here, else the literal (the server hashes it). */
function passwordClause(password: string | null): string {
  if (password === null) return 'password null';
  return `password ${quoteLiteral(scramSha256Verifier(password) ?? password)}`;
}

/** SQLSTATE duplicate_object: another session created the role first. */
const ALREADY_EXISTS = '42710';

async function roleExists(client: pg.ClientBase, name: string): Promise<boolean> {
  return (await client.query('select 1 from pg_roles where rolname = $1', [name])).rowCount === 1;
}

export interface EnsureLoginOptions {
  ref: string;
  platformKey: string;
  /** Password of a login created now (`null`: no password until one is set). Ignored when it exists. */
  password: string | null;
}

/**
 * Creates the project's login and internal roles when missing (cluster-wide roles, no
 * privileges yet); returns true when the login was created now. `client`: superuser, any database.
 */
export async function ensureProjectRoles(client: pg.ClientBase, opts: EnsureLoginOptions): Promise<boolean> {
  const login = projectLoginRole(opts.ref);
  const sqlRole = projectSqlRole(opts.ref);
  if (!(await roleExists(client, PROJECT_LOGIN_GROUP)))
    await runRoleStatement(client, `create role ${PROJECT_LOGIN_GROUP} nologin`, ALREADY_EXISTS);
  const created = !(await roleExists(client, login));
  if (created)
    await runRoleStatement(
      client,
      `create role ${quoteIdent(login)} login bypassrls ${passwordClause(opts.password)}`,
      ALREADY_EXISTS,
    );
  if (!(await roleExists(client, sqlRole)))
    await runRoleStatement(
      client,
      `create role ${quoteIdent(sqlRole)} login noinherit ${passwordClause(projectSqlPassword(opts.platformKey, opts.ref))}`,
      ALREADY_EXISTS,
    );
  const fnRole = projectFunctionRole(opts.ref);
  if (!(await roleExists(client, fnRole)))
    await runRoleStatement(
      client,
      `create role ${quoteIdent(fnRole)} login noinherit ${passwordClause(projectFunctionPassword(opts.platformKey, opts.ref))}`,
      ALREADY_EXISTS,
    );
  return created;
}

/**
 * Creates the project's login and internal SQL role when missing and (re)applies their privileges.
 * `client` is a superuser connection to the project's database. Idempotent.
 */
export async function ensureProjectLogin(client: pg.ClientBase, opts: EnsureLoginOptions): Promise<void> {
  const L = quoteIdent(projectLoginRole(opts.ref));
  const S = quoteIdent(projectSqlRole(opts.ref));
  const F = quoteIdent(projectFunctionRole(opts.ref));
  const { rows } = await client.query<{ db: string }>('select current_database() as db');
  const db = quoteIdent(rows[0]?.db ?? '');
  const created = await ensureProjectRoles(client, opts);

  await client.query(`grant ${PROJECT_LOGIN_GROUP} to ${L}, ${S}, ${F}`);
  // Member of the API roles as hosted `postgres` is, but without SET (nor INHERIT): those roles are
  // cluster-wide here, and a role may `ALTER ROLE <itself> SET …` — after `SET ROLE anon` that would
  // change anon for every project on the server. (PostgreSQL < 16 has no such options: no membership.)
  const version = Number(
    (await client.query<{ v: string }>(`select current_setting('server_version_num') as v`)).rows[0]?.v ?? 0,
  );
  if (version >= 160000)
    await client.query(`grant anon, authenticated, service_role to ${L} with inherit false, set false`);
  await client.query(`grant ${L} to ${S}`);
  // The functions' login switches roles as the API's authenticator does (NOINHERIT: nothing until it
  // does), but only inside its own database; its sessions start as the project's login.
  await client.query(
    version >= 160000
      ? `grant ${L}, anon, authenticated, service_role to ${F} with inherit false, set true`
      : `grant ${L}, anon, authenticated, service_role to ${F}`,
  );
  await client.query(`alter role ${F} set role = ${quoteLiteral(projectLoginRole(opts.ref))}`);
  await client.query(`revoke connect, temporary on database ${db} from public`);
  await client.query(`grant connect, create, temporary on database ${db} to ${L}`);
  await client.query(`grant connect on database ${db} to ${S}, ${F}`);
  if (created) {
    // The user's schema is theirs, with what the platform's bootstrap put in it.
    await client.query(`alter schema public owner to ${L}`);
    const owned = await client.query<{ kind: string; name: string }>(
      `select case c.relkind when 'S' then 'sequence' when 'v' then 'view' when 'm' then 'materialized view'
                              when 'f' then 'foreign table' else 'table' end as kind,
              format('%I.%I', n.nspname, c.relname) as name
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'public' and c.relkind in ('r', 'p', 'v', 'm', 'f')
          and c.relowner = (select oid from pg_roles where rolname = current_user)`,
    );
    for (const r of owned.rows) await client.query(`alter ${r.kind} ${r.name} owner to ${L}`);
  }
  // The grants below are DDL to the GraphQL schema-version event triggers: each runs only when
  // something is missing, so loading a project (every node, every start) leaves the version alone.
  const login = projectLoginRole(opts.ref);
  const { rows: missing } = await client.query<Record<string, boolean>>(
    `select
       (select count(*) from pg_default_acl d join pg_namespace n on n.oid = d.defaclnamespace
         where d.defaclrole = (select oid from pg_roles where rolname = $1) and n.nspname = 'public' and d.defaclobjtype in ('r', 'S', 'f')) < 3 as defaults,
       not (has_schema_privilege($1, 'auth', 'usage') and has_schema_privilege($1, 'storage', 'usage')
            and has_schema_privilege($1, 'graphql', 'usage')) as schemas,
       exists (select from pg_class c join pg_namespace n on n.oid = c.relnamespace
                where n.nspname = 'storage'
                  and case when c.relkind in ('r', 'p', 'v')
                      then not has_table_privilege($1, c.oid, 'select, insert, update, delete, truncate, references, trigger')
                      else false end) as tables,
       exists (select from pg_class c join pg_namespace n on n.oid = c.relnamespace
                where n.nspname = 'storage'
                  and case when c.relkind = 'S' then not has_sequence_privilege($1, c.oid, 'usage, select, update')
                      else false end) as sequences,
       exists (select from pg_proc p join pg_namespace n on n.oid = p.pronamespace
                where n.nspname = 'auth' and not has_function_privilege($1, p.oid, 'execute')) as functions,
       exists (select from pg_class c join pg_namespace n on n.oid = c.relnamespace
                where n.nspname = 'storage' and c.relkind in ('r', 'p')
                  and c.relowner <> (select oid from pg_roles where rolname = $1)) as storage_owner`,
    [login],
  );
  const need = missing[0] ?? {};
  if (created || need.defaults)
    for (const kind of ['tables', 'sequences', 'functions'])
      await client.query(
        `alter default privileges for role ${L} in schema public grant all on ${kind} to anon, authenticated, service_role`,
      );
  if (need.schemas) await client.query(`grant usage on schema auth, storage, graphql to ${L}`);
  if (need.tables) await client.query(`grant all on all tables in schema storage to ${L}`);
  if (need.sequences) await client.query(`grant all on all sequences in schema storage to ${L}`);
  if (need.functions) await client.query(`grant execute on all functions in schema auth to ${L}`);
  if (need.storage_owner) {
    // Storage's tables are the tenant's to secure (policies), as on the hosted platform.
    const { rows: tables } = await client.query<{ name: string }>(
      `select format('%I.%I', n.nspname, c.relname) as name
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'storage' and c.relkind in ('r', 'p')
          and c.relowner <> (select oid from pg_roles where rolname = $1)`,
      [login],
    );
    for (const t of tables) await client.query(`alter table ${t.name} owner to ${L}`);
  }
}

/** Sets (or with `null` removes) the project login's password. `client`: superuser, any database. */
export async function setProjectLoginPassword(
  client: pg.ClientBase,
  ref: string,
  password: string | null,
): Promise<void> {
  await client.query(`alter role ${quoteIdent(projectLoginRole(ref))} ${passwordClause(password)}`);
}

/** Whether the project's login has a password (a login without one cannot log in). `client`: superuser. */
export async function projectLoginHasPassword(client: pg.ClientBase, ref: string): Promise<boolean> {
  const { rows } = await client.query<{ ok: boolean }>(
    'select rolpassword is not null as ok from pg_catalog.pg_authid where rolname = $1',
    [projectLoginRole(ref)],
  );
  return rows[0]?.ok === true;
}

/** Drops the project's logins (after the project's database is gone). */
export async function dropProjectLogin(client: pg.ClientBase, ref: string): Promise<void> {
  for (const role of [...projectInternalRoles(ref), projectLoginRole(ref)])
    await client.query(`drop role if exists ${quoteIdent(role)}`);
}
