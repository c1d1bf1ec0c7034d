-- What the API roles may use in a project database, as on the reference platform:
-- tables, sequences and functions created in public by the owner are usable by anon,
-- authenticated and service_role; RLS policies then decide row by row.
grant usage on schema public to anon, authenticated, service_role;
grant all on all tables in schema public to anon, authenticated, service_role;
grant all on all sequences in schema public to anon, authenticated, service_role;
grant all on all functions in schema public to anon, authenticated, service_role;
alter default privileges in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges in schema public grant all on sequences to anon, authenticated, service_role;
alter default privileges in schema public grant all on functions to anon, authenticated, service_role;
-- The API connects as authenticator and switches role per request.
grant connect on database {{database}} to authenticator;
