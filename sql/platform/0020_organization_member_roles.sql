-- Organization roles as the hosted platform names them (src/management/http/permissions.ts).
alter table organization_members
  add constraint organization_members_role_check
  check (role in ('owner', 'administrator', 'developer', 'read_only'));
