/**
 * Restores a project's pg_dump archive (project-move.ts) without running the tenant's code as the
 * superuser. Restoring table data evaluates CHECK constraints (and domain checks), and the
 * post-data section may add a CHECK constraint to existing rows: a tenant function called there
 * would run as whoever restores. So what the tenant's login owns is restored as that login
 * (`pg_restore --role`), the rest as the superuser:
 *   1. pre-data, everything, as the superuser (definitions: nothing is evaluated), then the login's
 *      privileges on the platform's schemas;
 *   2. data of the platform's objects as the superuser, then the tenant's as its login;
 *   3. post-data as the superuser (indexes and keys, built as the table's owner by PostgreSQL;
 *      triggers, policies, grants, event triggers: nothing evaluated), then the tenant's CHECK and
 *      foreign-key constraints and materialized views' data as its login.
 * Each step is one transaction; a failure fails the move (which drops the target database).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BUFFER = { maxBuffer: 64 << 20 };

export interface RestoreOptions {
  pgRestore: string;
  archive: string;
  /** Target database URL (superuser). */
  targetDb: string;
  /** The tenant's login, owner of what the tenant made (`postgres.<ref>`). */
  login: string;
  /** A private folder for the restore lists. */
  dir: string;
  /**
   * Run after the definitions, before any data: gives the login its privileges on the platform's
   * schemas (pg_restore restores grants with the post-data section, after the data).
   */
  afterDefinitions: () => Promise<void>;
}

/** A table-of-contents entry (`<id>; <catalog> <oid> <KIND> …`) of the post-data section. */
const POST_DATA =
  /^\d+; \d+ \d+ (CONSTRAINT|CHECK CONSTRAINT|FK CONSTRAINT|INDEX|INDEX ATTACH|TRIGGER|EVENT TRIGGER|POLICY|ROW SECURITY|RULE|MATERIALIZED VIEW DATA|PUBLICATION|PUBLICATION TABLE|PUBLICATION TABLES IN SCHEMA|SUBSCRIPTION|STATISTICS|ACL|DEFAULT ACL|COMMENT|SECURITY LABEL) /;
/** Post-data entries that evaluate the tenant's expressions against rows: restored as the tenant. */
const EVALUATES = /^\d+; \d+ \d+ (CHECK CONSTRAINT|FK CONSTRAINT|MATERIALIZED VIEW DATA) /;

/** Splits the archive's table of contents by owner: the tenant's login, or anyone else. */
async function tocLists(opts: RestoreOptions): Promise<{ platform: string; tenant: string }> {
  const { stdout } = await run(opts.pgRestore, ['--list', opts.archive], BUFFER);
  const entries = stdout.split('\n').filter((l) => l.trim() !== '' && !l.startsWith(';'));
  // The owner is the entry's last word (`3380; 0 16400 TABLE DATA public t postgres.<ref>`).
  const ownedByTenant = (l: string) => l.trimEnd().endsWith(` ${opts.login}`);
  // Of the tenant's post-data, what evaluates its expressions against the restored rows; the rest
  // (indexes, primary keys: built as the table's owner by PostgreSQL itself; triggers, policies,
  // grants: nothing runs) needs CREATE on the platform's schemas the login does not have.
  const asTenant = (l: string) => ownedByTenant(l) && (!POST_DATA.test(l) || EVALUATES.test(l));
  const platform = join(opts.dir, 'platform.list');
  const tenant = join(opts.dir, 'tenant.list');
  writeFileSync(platform, entries.filter((l) => !asTenant(l)).join('\n') + '\n', { mode: 0o600 });
  writeFileSync(tenant, entries.filter(asTenant).join('\n') + '\n', { mode: 0o600 });
  return { platform, tenant };
}

export async function restoreProjectArchive(opts: RestoreOptions): Promise<void> {
  const lists = await tocLists(opts);
  const restore = (args: string[]) =>
    run(
      opts.pgRestore,
      ['--exit-on-error', '--single-transaction', `--dbname=${opts.targetDb}`, ...args, opts.archive],
      BUFFER,
    ).catch((err: Error & { stderr?: string }) => {
      throw new Error(
        `pg_restore ${args.filter((a) => a.startsWith('--section') || a.startsWith('--role')).join(' ')}: ${err.stderr?.trim() || err.message}`,
      );
    });
  const asTenant = [`--role=${opts.login}`, `--use-list=${lists.tenant}`];
  await restore(['--section=pre-data']);
  await opts.afterDefinitions();
  await restore(['--section=data', `--use-list=${lists.platform}`]);
  await restore(['--section=data', ...asTenant]);
  await restore(['--section=post-data', `--use-list=${lists.platform}`]);
  await restore(['--section=post-data', ...asTenant]);
}
