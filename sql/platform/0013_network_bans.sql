-- Network bans (M22–M23): failed authentications per (project, client IP) in the current window,
-- and the resulting bans. Kept here so every API process sees the same state.
create table network_auth_failures (
  project_ref text not null references projects(ref) on delete cascade,
  ip inet not null,
  window_start timestamptz not null,
  failures integer not null,
  primary key (project_ref, ip)
);

create table network_bans (
  project_ref text not null references projects(ref) on delete cascade,
  ip inet not null,
  banned_at timestamptz not null default now(),
  primary key (project_ref, ip)
);
