-- Edge functions (Management API M9–M14): metadata and the uploaded body, per project.
create table edge_functions (
  id uuid primary key default gen_random_uuid(),
  project_ref text not null references projects(ref) on delete cascade,
  slug text not null check (slug ~ '^[A-Za-z0-9_-]+$'),
  name text not null,
  status text not null default 'ACTIVE' check (status in ('ACTIVE', 'REMOVED', 'THROTTLED')),
  version integer not null default 1,
  verify_jwt boolean not null default true,
  import_map boolean,
  entrypoint_path text,
  import_map_path text,
  ezbr_sha256 text,
  -- The body exactly as uploaded: JSON `body` source text (text/typescript) or an eszip bundle.
  body bytea not null,
  body_content_type text not null,
  body_sha256 text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (project_ref, slug)
);
