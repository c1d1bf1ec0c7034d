-- A deleted project stays as a tombstone row (status REMOVED), so the foreign keys' cascades never
-- fire: drop its functions (bodies), custom hostname, root key, bans and restrictions when it
-- becomes REMOVED.
create or replace function cleanup_removed_project() returns trigger
language plpgsql as $$
begin
  delete from edge_functions where project_ref = new.ref;
  delete from custom_hostnames where project_ref = new.ref;
  delete from project_root_keys where project_ref = new.ref;
  delete from network_auth_failures where project_ref = new.ref;
  delete from network_bans where project_ref = new.ref;
  delete from network_restrictions where project_ref = new.ref;
  return new;
end
$$;
create trigger projects_cleanup_removed after update of status on projects
  for each row when (new.status = 'REMOVED' and old.status is distinct from 'REMOVED')
  execute function cleanup_removed_project();
