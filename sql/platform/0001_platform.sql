-- Platform metadata: who may do what, and where each project lives.
create table users (
  id uuid primary key default gen_random_uuid(),
  email text not null unique,
  created_at timestamptz not null default now()
);

create table organizations (
  id text primary key,            -- also the slug the API shows
  name text not null,
  created_at timestamptz not null default now()
);

create table organization_members (
  organization_id text not null references organizations(id) on delete cascade,
  user_id uuid not null references users(id) on delete cascade,
  role text not null default 'owner',
  primary key (organization_id, user_id)
);

-- Personal access tokens: only a SHA-256 digest is stored.
create table access_tokens (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users(id) on delete cascade,
  name text not null,
  token_sha256 text not null unique,
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);

create table db_servers (
  id text primary key,
  -- How to reach the server as a superuser is configuration, not data: only the id is kept here.
  managed boolean not null default false,
  created_at timestamptz not null default now()
);

create table projects (
  ref text primary key check (ref ~ '^[a-z]{20}$'),
  organization_id text not null references organizations(id),
  name text not null,
  region text not null default 'local',
  status text not null default 'ACTIVE_HEALTHY',
  db_server text not null references db_servers(id),
  db_name text not null,
  jwt_secret text not null,
  anon_key text not null,
  service_role_key text not null,
  is_default boolean not null default false,
  created_at timestamptz not null default now()
);
create unique index projects_one_default on projects (is_default) where is_default;
