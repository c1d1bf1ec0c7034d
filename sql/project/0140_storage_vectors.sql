-- Vector buckets of the Storage API (`/storage/v1/vector/*`, upstream's S3 Vectors-shaped routes):
-- buckets, their indexes (dimension, distance metric, data type, non-filterable metadata keys) and
-- the vectors themselves (float4[] data, jsonb metadata, the data's L2 norm kept for cosine). No
-- pgvector: nearest neighbours are an exact scan computed in SQL (src/storage/database/vectors.ts).
-- Only the service role reaches them: RLS on with no policies (service_role bypasses RLS), and
-- anon/authenticated lose the privileges the schema's default privileges gave them.
create table if not exists storage.buckets_vectors (
  id text collate "C" not null primary key,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table if not exists storage.vector_indexes (
  id uuid not null default gen_random_uuid() primary key,
  bucket_id text collate "C" not null references storage.buckets_vectors (id),
  name text collate "C" not null,
  data_type text not null check (data_type = 'float32'),
  dimension integer not null check (dimension between 1 and 4096),
  distance_metric text not null check (distance_metric in ('cosine', 'euclidean')),
  metadata_configuration jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (bucket_id, name)
);

create table if not exists storage.vectors (
  index_id uuid not null references storage.vector_indexes (id) on delete cascade,
  key text collate "C" not null,
  data float4[] not null,
  norm float8 not null,
  metadata jsonb not null default '{}'::jsonb,
  primary key (index_id, key)
);

alter table storage.buckets_vectors enable row level security;
alter table storage.vector_indexes enable row level security;
alter table storage.vectors enable row level security;
revoke all on storage.buckets_vectors, storage.vector_indexes, storage.vectors from anon, authenticated;
grant all on storage.buckets_vectors, storage.vector_indexes, storage.vectors to service_role;
