-- Project secrets (Edge Function environment). The value is encrypted with the platform key
-- (AES-256-GCM, see src/platform/secret-box.ts); value_sha256 is what the API shows.
create table project_secrets (
  project_ref text not null references projects(ref) on delete cascade,
  name text not null,
  value_encrypted bytea not null,
  value_sha256 text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (project_ref, name)
);
