-- A draining database server takes no new projects (README "Running as a cluster"); its projects
-- stay where they are until moved (`strata projects move <ref> --to <server>`).
alter table db_servers add column draining boolean not null default false;
