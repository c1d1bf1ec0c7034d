-- GENERATED from sql/graphql/objects.sql by scripts/generate-engine-sql.mjs (npm run build):
-- edit that file, not this one. The GraphQL engine's objects, so that a project database has its
-- schema version from the first bootstrap; the engine's install replaces them when it runs.
create schema if not exists graphql;

-- THE SOURCE of the GraphQL engine's database-side objects (edit here, nowhere else). Taken from
-- this file as is: the engine's installSchema() (after `create schema if not exists graphql`), the
-- strata_graphql extension script (the control file's schema comes first), and, generated at
-- build time by scripts/generate-engine-sql.mjs, the project migration
-- sql/project/0003_graphql_schema_version.sql. Idempotent; no `create schema` (see above).

-- Every SECURITY DEFINER function here runs as a superuser, the event triggers' ones on the
-- tenant's own DDL: each pins search_path = pg_catalog, pg_temp, so that nothing the tenant defines
-- in its schemas (a nextval(text) in public...) is ever called in their place.

-- The schema version: a sequence bumped by event triggers on every DDL (CREATE/ALTER/DROP,
-- COMMENT, GRANT/REVOKE), and announced with NOTIFY so that every API process drops its cached
-- schema. Same objects as pg_graphql (graphql.seq_schema_version, graphql.get_schema_version()).
create sequence if not exists graphql.seq_schema_version as int cycle;

create or replace function graphql.get_schema_version() returns int
language sql security definer set search_path = pg_catalog, pg_temp
as $$ select last_value from graphql.seq_schema_version $$;

create or replace function graphql.increment_schema_version() returns event_trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp
as $$
declare v bigint;
begin
  v := nextval('graphql.seq_schema_version');
  perform pg_notify('strata_schema_version', current_database() || ':' || v::text);
end;
$$;

do $$
begin
  if not exists (select from pg_event_trigger where evtname = 'graphql_watch_ddl') then
    create event trigger graphql_watch_ddl on ddl_command_end execute procedure graphql.increment_schema_version();
  end if;
  if not exists (select from pg_event_trigger where evtname = 'graphql_watch_drop') then
    create event trigger graphql_watch_drop on sql_drop execute procedure graphql.increment_schema_version();
  end if;
end
$$;

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
language plpgsql stable security definer set search_path = pg_catalog, pg_temp as $$
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
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
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
-- The request prelude's guard reads the version with pg_sequence_last_value, as whichever role the
-- request runs as: reading a DDL counter is harmless; USAGE (nextval) stays with the owner.
grant select on sequence graphql.seq_schema_version to public;

-- The API roles (those of them this cluster has: a bare database may have none) read the version.
do $$
declare r name;
begin
  for r in select rolname from pg_roles where rolname in ('anon', 'authenticated', 'service_role') loop
    execute format('grant usage on schema graphql to %I', r);
    -- SELECT only (from PUBLIC, above): nextval by an API role would drop every API process's cached schema.
    execute format('revoke usage on sequence graphql.seq_schema_version from %I', r);
    execute format('grant execute on function graphql.get_schema_version() to %I', r);
  end loop;
end
$$;
