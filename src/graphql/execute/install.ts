/** The engine's database-side objects: sql/project/0003 (schema version) plus exception/comment_directive/version guard. */
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { sqlPath } from '../../db/sql-dir.js';

const EXTRA = `
create or replace function graphql.exception(message text) returns text
language plpgsql as $$ begin raise exception using errcode = '22000', message = message; end; $$;

create or replace function graphql.comment_directive(comment_ text) returns jsonb
language sql immutable as $$
  select case when comment_ is null or position('@graphql(' in comment_) = 0 then null
    else substring(comment_ from position('@graphql(' in comment_) + 9
           for length(comment_) - position(')' in reverse(comment_)) + 1 - (position('@graphql(' in comment_) + 9))::jsonb end
$$;

-- Fails the statement it is part of when the schema version is not the one the caller compiled for.
create or replace function graphql.strata_assert_schema_version(expected int) returns int
language plpgsql stable security definer as $$
declare v int;
begin
  select last_value into v from graphql.seq_schema_version;
  if v is distinct from expected then
    raise exception using errcode = 'GQLSV', message = 'graphql schema version changed';
  end if;
  return v;
end;
$$;

-- A transactional companion to the version sequence: DDL that is rolled back (to a savepoint or
-- entirely) also rolls back this marker, so a connection never reuses a catalog read while
-- uncommitted DDL was visible.
create table if not exists graphql.strata_schema_state (version bigint primary key);
create or replace function graphql.strata_mark_schema_state() returns event_trigger
language plpgsql security definer as $$
begin
  insert into graphql.strata_schema_state (version) values (graphql.get_schema_version()) on conflict do nothing;
end;
$$;
do $$
begin
  if not exists (select from pg_event_trigger where evtname = 'strata_graphql_schema_state') then
    create event trigger strata_graphql_schema_state on ddl_command_end execute procedure graphql.strata_mark_schema_state();
  end if;
end
$$;
grant select on graphql.strata_schema_state to public;

grant usage on schema graphql to public;
grant execute on function graphql.exception(text), graphql.comment_directive(text),
  graphql.get_schema_version(), graphql.strata_assert_schema_version(int) to public;
`;

/** Runs 0003 as written, granting only to the API roles that exist in this cluster. */
async function schemaVersionSql(client: pg.ClientBase): Promise<string> {
  const text = readFileSync(sqlPath('project', '0003_graphql_schema_version.sql'), 'utf8');
  const { rows } = await client.query<{ rolname: string }>(
    `select rolname from pg_roles where rolname in ('anon', 'authenticated', 'service_role')`,
  );
  if (rows.length === 3) return text;
  const have = rows.map((r) => r.rolname);
  return text.replace(/^grant ([^;]*?) to anon, authenticated, service_role;$/gm, (_m, what: string) =>
    have.length ? `grant ${what} to ${have.join(', ')};` : '',
  );
}

export async function install(client: pg.ClientBase): Promise<void> {
  const sql = await schemaVersionSql(client);
  await client.query(`${sql}\n${EXTRA}`);
}
