-- Management API rate-limit counters: one fixed window per (caller, scope, endpoint) key.
-- Unlogged: losing the counters in a crash only resets the windows.
create unlogged table rate_limit_counters (
  key text primary key,
  window_start timestamptz not null,
  window_ms integer not null,
  count integer not null
);
