-- Storage API: the `storage` schema, shaped like the reference platform's final schema
-- (supabase/storage tenant migrations), so that existing policies (storage.foldername(name),
-- owner_id, bucket_id) keep working. RLS is enabled on the tables with no policies: only the
-- service role (BYPASSRLS) can do anything until the project's owner writes policies.
create schema if not exists storage;
grant usage on schema storage to anon, authenticated, service_role;

do $$
begin
  if not exists (select from pg_type t join pg_namespace n on n.oid = t.typnamespace
                 where n.nspname = 'storage' and t.typname = 'buckettype') then
    create type storage.buckettype as enum ('STANDARD', 'ANALYTICS', 'VECTOR');
  end if;
end
$$;

create table if not exists storage.buckets (
  id text not null primary key,
  name text not null,
  owner uuid,
  owner_id text,
  public boolean default false,
  file_size_limit bigint,
  allowed_mime_types text[],
  avif_autodetection boolean default false,
  type storage.buckettype not null default 'STANDARD',
  versioning_status text not null default 'DISABLED' check (versioning_status = 'DISABLED'),
  created_at timestamptz default now(),
  updated_at timestamptz default now()
);
create unique index if not exists bname on storage.buckets using btree (name);

create table if not exists storage.objects (
  id uuid not null default gen_random_uuid() primary key,
  bucket_id text references storage.buckets (id),
  name text,
  owner uuid,
  owner_id text,
  metadata jsonb,
  user_metadata jsonb,
  version text,
  path_tokens text[] generated always as (string_to_array(name, '/')) stored,
  created_at timestamptz default now(),
  updated_at timestamptz default now(),
  last_accessed_at timestamptz default now(),
  archived_at timestamptz,
  is_delete_marker boolean not null default false,
  is_versioned boolean not null default false
);
create unique index if not exists bucketid_objname on storage.objects using btree (bucket_id, name);
create index if not exists idx_objects_bucket_id_name on storage.objects (bucket_id, name collate "C");
create index if not exists idx_objects_bucket_id_lower_name on storage.objects (bucket_id, (lower(name)) collate "C");
create index if not exists name_prefix_search on storage.objects using btree (name text_pattern_ops);

create table if not exists storage.migrations (
  id integer primary key,
  name varchar(100) not null unique,
  hash varchar(40) not null,
  executed_at timestamp default current_timestamp
);

alter table storage.buckets enable row level security;
alter table storage.objects enable row level security;
alter table storage.migrations enable row level security;

-- Helpers used in policies.
create or replace function storage.foldername(name text) returns text[]
language plpgsql immutable
as $$
declare _parts text[];
begin
  select string_to_array(name, '/') into _parts;
  return _parts[1 : array_length(_parts, 1) - 1];
end
$$;

create or replace function storage.filename(name text) returns text
language plpgsql immutable
as $$
declare _parts text[];
begin
  select string_to_array(name, '/') into _parts;
  return _parts[array_length(_parts, 1)];
end
$$;

create or replace function storage.extension(name text) returns text
language plpgsql immutable
as $$
declare _parts text[]; _filename text;
begin
  select string_to_array(name, '/') into _parts;
  select _parts[array_length(_parts, 1)] into _filename;
  return reverse(split_part(reverse(_filename), '.', 1));
end
$$;

create or replace function storage.get_size_by_bucket() returns table (size bigint, bucket_id text)
language plpgsql stable
as $$
begin
  return query
    select sum((metadata ->> 'size')::bigint)::bigint as size, obj.bucket_id
    from storage.objects as obj
    group by obj.bucket_id;
end
$$;

-- The operation the Storage API is performing (set per request as `storage.operation`).
create or replace function storage.operation() returns text
language plpgsql stable
as $$
begin
  return current_setting('storage.operation', true);
end
$$;

create or replace function storage.allow_only_operation(expected_operation text) returns boolean
language plpgsql stable
as $$
declare op text := storage.operation();
begin
  return op is not null and (op = expected_operation or op = 'storage.' || expected_operation);
end
$$;

create or replace function storage.allow_any_operation(expected_operations text[]) returns boolean
language plpgsql stable
as $$
declare op text := storage.operation();
begin
  return op is not null and exists (
    select 1 from unnest(expected_operations) e where op = e or op = 'storage.' || e);
end
$$;

-- list-v1 engine: one folder level under `prefix`, names relative to the prefix; folders first
-- unless sorting by name. Security invoker: RLS decides which objects count.
create or replace function storage.search(
  prefix text,
  bucketname text,
  limits int default 100,
  levels int default 1,
  offsets int default 0,
  search text default '',
  sortcolumn text default 'name',
  sortorder text default 'asc'
) returns table (name text, id uuid, updated_at timestamptz, created_at timestamptz, last_accessed_at timestamptz, metadata jsonb)
language plpgsql stable
as $$
declare
  p text := coalesce(prefix, '');
  q text;
  lim int := least(greatest(coalesce(limits, 100), 1), 1500);
  off int := greatest(coalesce(offsets, 0), 0);
  dir text := case when lower(coalesce(sortorder, 'asc')) = 'desc' then 'desc' else 'asc' end;
  col text := case when sortcolumn in ('name', 'updated_at', 'created_at', 'last_accessed_at') then sortcolumn else 'name' end;
begin
  if p <> '' and right(p, 1) <> '/' then p := p || '/'; end if;
  q := p || coalesce(search, '');
  return query execute format(
    $q$
    with candidates as (
      select o.name, o.id, o.updated_at, o.created_at, o.last_accessed_at, o.metadata,
             strpos(substr(o.name, length($1) + 1), '/') as slash
      from storage.objects o
      where o.bucket_id = $2
        and lower(left(o.name, length($1))) = lower($1)
    ),
    folders as (
      select distinct on (lower(f.fname))
             substr(f.fname, length($3) + 1) as name, null::uuid as id, null::timestamptz as updated_at,
             null::timestamptz as created_at, null::timestamptz as last_accessed_at, null::jsonb as metadata,
             true as is_folder
      from (select left(c.name, length($1) + c.slash - 1) as fname from candidates c where c.slash > 0) f
      order by lower(f.fname), f.fname
    ),
    files as (
      select substr(c.name, length($3) + 1) as name, c.id, c.updated_at, c.created_at, c.last_accessed_at, c.metadata,
             false as is_folder
      from candidates c where c.slash = 0
    ),
    entries as (select * from folders union all select * from files)
    select e.name, e.id, e.updated_at, e.created_at, e.last_accessed_at, e.metadata
    from entries e
    order by %s
    limit $4 offset $5
    $q$,
    case when col = 'name'
      then format('lower(e.name) collate "C" %s, e.name collate "C" %s', dir, dir)
      else format('e.is_folder desc, case when e.is_folder then lower(e.name) end collate "C" asc, e.%I %s, e.name collate "C" %s', col, dir, dir)
    end
  ) using q, bucketname, p, lim, off;
end
$$;

-- updated_at follows every UPDATE of an object row.
create or replace function storage.update_updated_at_column() returns trigger
language plpgsql
as $$
begin
  new.updated_at = now();
  return new;
end
$$;

create or replace function storage.enforce_bucket_name_length() returns trigger
language plpgsql
as $$
begin
  if length(new.name) > 100 then
    raise exception 'bucket name "%" is too long (% characters). Max is 100.', new.name, length(new.name);
  end if;
  return new;
end
$$;

-- Rows deleted in plain SQL would orphan their bytes: only the Storage API (which sets
-- storage.allow_delete_query in its transaction) may delete.
create or replace function storage.protect_delete() returns trigger
language plpgsql
as $$
begin
  if coalesce(current_setting('storage.allow_delete_query', true), 'false') <> 'true' then
    raise exception 'Direct deletion from storage tables is not allowed. Use the Storage API instead.'
      using hint = 'This prevents accidental data loss from orphaned objects.', errcode = '42501';
  end if;
  return null;
end
$$;

drop trigger if exists update_objects_updated_at on storage.objects;
create trigger update_objects_updated_at before update on storage.objects
  for each row execute function storage.update_updated_at_column();
drop trigger if exists enforce_bucket_name_length_trigger on storage.buckets;
create trigger enforce_bucket_name_length_trigger before insert or update of name on storage.buckets
  for each row execute function storage.enforce_bucket_name_length();
drop trigger if exists protect_objects_delete on storage.objects;
create trigger protect_objects_delete before delete on storage.objects
  for each statement execute function storage.protect_delete();
drop trigger if exists protect_buckets_delete on storage.buckets;
create trigger protect_buckets_delete before delete on storage.buckets
  for each statement execute function storage.protect_delete();

-- As on the reference platform: the API roles have full privileges; policies decide.
grant all on all tables in schema storage to anon, authenticated, service_role;
grant all on all sequences in schema storage to anon, authenticated, service_role;
grant all on all functions in schema storage to anon, authenticated, service_role;
alter default privileges in schema storage grant all on tables to anon, authenticated, service_role;
alter default privileges in schema storage grant all on sequences to anon, authenticated, service_role;
alter default privileges in schema storage grant all on functions to anon, authenticated, service_role;
