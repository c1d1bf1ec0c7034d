-- Per-project encryption root keys (M20–M21), sealed with the platform key (AES-256-GCM, src/platform/secret-box.ts).
create table project_root_keys (
  project_ref text primary key references projects(ref) on delete cascade,
  root_key_sealed bytea not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- New projects are announced so that an API process generates their root key (and installs the
-- vault key) right away; see src/management/encryption/provisioning.ts.
create or replace function notify_project_created() returns trigger
language plpgsql as $$
begin
  perform pg_notify('strata_project_created', new.ref);
  return new;
end
$$;
create trigger projects_notify_created after insert on projects
  for each row execute function notify_project_created();
