-- Deleted projects keep a tombstone row (status REMOVED) so later calls answer
-- "Resource has been removed" and the ref is never handed out again.
alter table projects add column removed_at timestamptz;
create index projects_organization on projects (organization_id);
-- The numeric id the reference API returns from DELETE /v1/projects/{ref}.
alter table projects add column id bigint generated always as identity;
