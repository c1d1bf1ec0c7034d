-- Network restrictions (M24–M25): the requested config, and the last one applied to pg_hba.conf.
create table network_restrictions (
  project_ref text primary key references projects(ref) on delete cascade,
  config jsonb not null,
  status text not null check (status in ('stored', 'applied')),
  applied_config jsonb,
  status_detail text,
  updated_at timestamptz not null default now(),
  applied_at timestamptz
);
