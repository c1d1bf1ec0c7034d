-- Analytics (Iceberg) buckets and the Iceberg REST catalog that Strata keeps for them (shaped
-- like the reference's storage.buckets_analytics, storage.iceberg_namespaces and
-- storage.iceberg_tables). Only the service role reaches them: RLS on, no policies, and the
-- default grants of the storage schema taken back from anon and authenticated.
create table if not exists storage.buckets_analytics (
  id uuid not null default gen_random_uuid() primary key,
  name text collate "C" not null unique,
  type storage.buckettype not null default 'ANALYTICS',
  format text not null default 'ICEBERG',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- A bucket that still has namespaces, or a namespace that still has tables, cannot be deleted
-- (no cascade): the API refuses it first, the foreign keys are the backstop.
create table if not exists storage.iceberg_namespaces (
  id uuid not null default gen_random_uuid() primary key,
  catalog_id uuid not null references storage.buckets_analytics (id),
  name text collate "C" not null,
  metadata jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (catalog_id, name)
);

-- One row per table: its current metadata (the JSON text of the current metadata file, so that
-- 64-bit snapshot ids keep every digit) and that file's s3:// location. `version` numbers the
-- metadata files (00000-, 00001-, ...) and is bumped by every commit.
create table if not exists storage.iceberg_tables (
  id uuid not null default gen_random_uuid() primary key,
  catalog_id uuid not null references storage.buckets_analytics (id),
  namespace_id uuid not null references storage.iceberg_namespaces (id),
  name text collate "C" not null,
  table_uuid uuid not null,
  location text not null,
  metadata_location text not null,
  metadata json not null,
  version integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (namespace_id, name)
);

-- The metadata files written to the storage backend for each table (backend bucket, key and
-- version, as objects are addressed there), so that the storage reconciliation keeps them.
create table if not exists storage.iceberg_metadata_files (
  table_id uuid not null references storage.iceberg_tables (id) on delete cascade,
  bucket_id text not null,
  key text collate "C" not null,
  version text not null,
  created_at timestamptz not null default now(),
  primary key (bucket_id, key, version)
);
create index if not exists idx_iceberg_metadata_files_table on storage.iceberg_metadata_files (table_id);

alter table storage.buckets_analytics enable row level security;
alter table storage.iceberg_namespaces enable row level security;
alter table storage.iceberg_tables enable row level security;
alter table storage.iceberg_metadata_files enable row level security;
revoke all on storage.buckets_analytics, storage.iceberg_namespaces, storage.iceberg_tables,
  storage.iceberg_metadata_files from anon, authenticated;
grant all on storage.buckets_analytics, storage.iceberg_namespaces, storage.iceberg_tables,
  storage.iceberg_metadata_files to service_role;
