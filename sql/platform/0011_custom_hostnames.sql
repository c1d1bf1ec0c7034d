-- Custom hostnames (M15–M19): one configuration per project, the §4 state machine.
create table custom_hostnames (
  project_ref text primary key references projects(ref) on delete cascade,
  id uuid not null default gen_random_uuid(),
  hostname text not null unique,
  status text not null check (status in ('1_not_started', '2_initiated', '3_challenge_verified', '4_origin_setup_completed', '5_services_reconfigured')),
  txt_name text not null,
  txt_value text not null,
  origin_server text not null,
  verification_errors jsonb not null default '[]',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  verified_at timestamptz,
  activated_at timestamptz
);
