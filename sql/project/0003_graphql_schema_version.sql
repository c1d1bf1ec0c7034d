-- The GraphQL engine's schema version: a sequence bumped by event triggers on every DDL
-- (CREATE/ALTER/DROP, COMMENT, GRANT/REVOKE), and announced with NOTIFY so that every API process
-- drops its cached schema. Same objects as pg_graphql (graphql.seq_schema_version,
-- graphql.get_schema_version()). The engine's installSchema() creates the same objects idempotently.
create schema if not exists graphql;
grant usage on schema graphql to anon, authenticated, service_role;

create sequence if not exists graphql.seq_schema_version as int cycle;
grant usage, select on sequence graphql.seq_schema_version to anon, authenticated, service_role;

create or replace function graphql.get_schema_version() returns int
language sql security definer
as $$ select last_value from graphql.seq_schema_version $$;
grant execute on function graphql.get_schema_version() to anon, authenticated, service_role;

create or replace function graphql.increment_schema_version() returns event_trigger
language plpgsql security definer
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
