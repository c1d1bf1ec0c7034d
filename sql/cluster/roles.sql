-- Cluster-wide roles (roles are shared by every database of a PostgreSQL server).
-- Applied by src/db/roles.ts before any project bootstrap; idempotent.
do $$
begin
  if not exists (select from pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select from pg_roles where rolname = 'service_role') then
    create role service_role nologin noinherit bypassrls;
  end if;
  if not exists (select from pg_roles where rolname = 'authenticator') then
    create role authenticator login noinherit;
  end if;
end
$$;
alter role service_role bypassrls;
grant anon, authenticated, service_role to authenticator;
alter role authenticator with login noinherit password {{authenticator_password}};
-- Calls made as these roles should not run forever. The API applies its own copy of these values
-- per request (src/db/role-limits.ts) and never reads these back: a role may rewrite its own
-- settings, and these roles are shared by every project on the server.
alter role anon set statement_timeout = '3s';
alter role authenticated set statement_timeout = '8s';
