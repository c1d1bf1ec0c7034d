-- S3 protocol multipart uploads (shaped like the reference's storage.s3_multipart_uploads and
-- storage.s3_multipart_uploads_parts). Only the service role reaches them (RLS on, no policies):
-- the Storage API checks the caller against the object's policies itself (a dry run when the
-- upload is created, the real write when it completes) and the upload's owner on every part.
create table if not exists storage.s3_multipart_uploads (
  id text not null primary key,
  in_progress_size bigint not null default 0,
  upload_signature text not null default '',
  bucket_id text not null references storage.buckets (id),
  key text collate "C" not null,
  version text not null,
  owner_id text,
  content_type text,
  cache_control text,
  user_metadata jsonb,
  created_at timestamptz not null default now()
);
create index if not exists idx_s3_multipart_uploads_bucket_key
  on storage.s3_multipart_uploads (bucket_id, key collate "C", created_at);

create table if not exists storage.s3_multipart_uploads_parts (
  id uuid not null default gen_random_uuid() primary key,
  upload_id text not null references storage.s3_multipart_uploads (id) on delete cascade,
  size bigint not null default 0,
  part_number int not null,
  bucket_id text not null references storage.buckets (id),
  key text collate "C" not null,
  etag text not null,
  owner_id text,
  version text not null,
  created_at timestamptz not null default now(),
  unique (upload_id, part_number)
);

alter table storage.s3_multipart_uploads enable row level security;
alter table storage.s3_multipart_uploads_parts enable row level security;
grant all on storage.s3_multipart_uploads, storage.s3_multipart_uploads_parts to service_role;
