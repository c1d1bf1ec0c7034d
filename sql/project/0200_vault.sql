-- The project vault: secrets stored as ciphertext (pgcrypto, OpenPGP symmetric AES-256 with an
-- integrity check), encrypted with the vault key. The vault key is derived by the platform from the
-- project's encryption root key (HKDF-SHA256; see src/management/encryption/) and written into
-- vault.key by the platform's superuser connection: no API role can read that table, the root key
-- itself never enters this database. Secrets are written with vault.create_secret() /
-- vault.update_secret() and read through vault.decrypted_secrets, both for service_role only.
-- After a root key change, secrets encrypted under the old key show decrypted_secret = null.
create schema if not exists extensions;
create extension if not exists pgcrypto with schema extensions;

create schema if not exists vault;
revoke all on schema vault from public;
grant usage on schema vault to service_role;

create table if not exists vault.key (
  id boolean primary key default true check (id),
  key_id text not null,   -- fingerprint (first 16 hex of SHA-256 of the key), stored with each secret
  key bytea not null,
  updated_at timestamptz not null default now()
);
revoke all on vault.key from public;

create table if not exists vault.secrets (
  id uuid primary key default gen_random_uuid(),
  name text unique,
  description text not null default '',
  secret bytea not null,  -- ciphertext
  key_id text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
revoke all on vault.secrets from public;
grant select on vault.secrets to service_role;

-- Encrypt/decrypt wrappers bound to wherever pgcrypto is installed (an existing installation in
-- another schema is reused). Not callable by API roles.
do $$
declare s text;
begin
  select n.nspname into s from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pgcrypto';
  execute format($f$
    create or replace function vault._encrypt(plain text, k bytea) returns bytea
    language sql immutable strict set search_path = pg_catalog
    as 'select %1$I.pgp_sym_encrypt_bytea(convert_to(plain, ''utf8''), encode(k, ''hex''), ''cipher-algo=aes256, s2k-mode=1, s2k-digest-algo=sha256'')'
  $f$, s);
  execute format($f$
    create or replace function vault._decrypt(cipher bytea, k bytea) returns text
    language sql immutable strict set search_path = pg_catalog
    as 'select convert_from(%1$I.pgp_sym_decrypt_bytea(cipher, encode(k, ''hex'')), ''utf8'')'
  $f$, s);
end
$$;
revoke all on function vault._encrypt(text, bytea), vault._decrypt(bytea, bytea) from public;

-- Runs with its owner's (the platform superuser's) rights, so it can read vault.key.
create or replace view vault.decrypted_secrets as
  select s.id, s.name, s.description, s.secret,
         case when s.key_id = k.key_id then vault._decrypt(s.secret, k.key) end as decrypted_secret,
         s.key_id, s.created_at, s.updated_at
  from vault.secrets s
  left join vault.key k on true;
revoke all on vault.decrypted_secrets from public;
grant select on vault.decrypted_secrets to service_role;

create or replace function vault._current_key(out key_id text, out key bytea)
language plpgsql stable security definer set search_path = pg_catalog
as $$
begin
  select k.key_id, k.key into key_id, key from vault.key k;
  if key is null then
    raise exception 'the vault key of this project is not configured yet' using hint = 'GET /v1/projects/{ref}/pgsodium installs it';
  end if;
end
$$;
revoke all on function vault._current_key() from public;

create or replace function vault.create_secret(new_secret text, new_name text default null, new_description text default '')
returns uuid
language plpgsql security definer set search_path = pg_catalog
as $$
declare k record; new_id uuid;
begin
  k := vault._current_key();
  insert into vault.secrets (name, description, secret, key_id)
  values (new_name, coalesce(new_description, ''), vault._encrypt(new_secret, k.key), k.key_id)
  returning id into new_id;
  return new_id;
end
$$;

create or replace function vault.update_secret(secret_id uuid, new_secret text default null, new_name text default null, new_description text default null)
returns void
language plpgsql security definer set search_path = pg_catalog
as $$
declare k record;
begin
  k := vault._current_key();
  update vault.secrets s set
    secret = case when new_secret is null then s.secret else vault._encrypt(new_secret, k.key) end,
    key_id = case when new_secret is null then s.key_id else k.key_id end,
    name = coalesce(new_name, s.name),
    description = coalesce(new_description, s.description),
    updated_at = now()
  where s.id = secret_id;
  if not found then
    raise exception 'vault secret % not found', secret_id;
  end if;
end
$$;

create or replace function vault.delete_secret(secret_id uuid) returns void
language sql security definer set search_path = pg_catalog
as $$ delete from vault.secrets where id = secret_id $$;

revoke all on function vault.create_secret(text, text, text), vault.update_secret(uuid, text, text, text), vault.delete_secret(uuid) from public;
grant execute on function vault.create_secret(text, text, text), vault.update_secret(uuid, text, text, text), vault.delete_secret(uuid) to service_role;
