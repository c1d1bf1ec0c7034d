-- S3 protocol access keys, per project. The secret is needed in the clear to check SigV4
-- signatures, so it is stored encrypted with the platform key (AES-256-GCM, src/platform/secret-box.ts),
-- bound to its row by the associated data; the API shows it once, when the key is created.
create table storage_s3_access_keys (
  id uuid not null primary key,
  project_ref text not null references projects(ref) on delete cascade,
  access_key_id text not null unique,
  secret_encrypted bytea not null,
  description text not null default '',
  created_at timestamptz not null default now()
);
create index storage_s3_access_keys_project on storage_s3_access_keys (project_ref);
