-- A revoked token keeps its row (so that re-registering the default token at start cannot revive it).
alter table access_tokens add column revoked_at timestamptz;
