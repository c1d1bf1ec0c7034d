-- Functions a view calls run as, and are checked against, the querying role, so the decrypting
-- view needs service_role to be able to execute vault._decrypt, and _decrypt runs with its
-- owner's rights (it calls pgcrypto in a schema the API roles cannot use). That is harmless: the
-- key it needs is in vault.key, which only the superuser can read (vault._current_key() stays
-- revoked from every API role).
alter function vault._decrypt(bytea, bytea) security definer;
grant execute on function vault._decrypt(bytea, bytea) to service_role;
