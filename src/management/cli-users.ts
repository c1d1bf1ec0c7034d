/**
 * `strata users add|list|remove` and `strata tokens create|list|revoke`: members of organizations
 * and their personal access tokens on a self-hosted platform, changed straight in the platform
 * database (organizations/members.ts). The database is the one of the running `strata start` of the
 * data folder (its status file), or the server of `--database-url` / DATABASE_URL.
 */
import { parseArgs } from 'node:util';
import { COMMON, DEFAULT_PLATFORM_DATABASE, withPlatformPool } from '../platform/cli-platform-db.js';
import { isOrganizationRole, ORGANIZATION_ROLES, type OrganizationRole } from './http/permissions.js';
import {
  addMember,
  createToken,
  listTokens,
  listUsers,
  removeMember,
  revokeToken,
} from './organizations/members.js';

const DEFAULT_ORGANIZATION = 'default-org';

export const USERS_HELP = `Usage:
  strata users add EMAIL [--org SLUG] [--role ${ORGANIZATION_ROLES.join('|')}]
                                  add a user to an organization (default: default-org, developer),
                                  or change the role of a member
  strata users list [--org SLUG] [--json]
  strata users remove EMAIL [--org SLUG]
                                  remove from one organization, or (without --org) delete the user
                                  and their tokens
  strata tokens create --user EMAIL [--name NAME]
                                  prints a new personal access token once (only its digest is kept)
  strata tokens list [--user EMAIL] [--json]
  strata tokens revoke TOKEN_ID

Common options: --data-dir DIR (of a running \`strata start\`), --database-url URL (the PostgreSQL
server of \`strata serve\` / DATABASE_URL), --platform-database NAME (default ${DEFAULT_PLATFORM_DATABASE}).`;

function roleFlag(v: string | undefined): OrganizationRole {
  if (v === undefined) return 'developer';
  if (!isOrganizationRole(v)) throw new Error(`--role must be one of ${ORGANIZATION_ROLES.join(', ')}`);
  return v;
}

function email(positionals: string[], what: string): string {
  const e = positionals[0];
  if (!e || positionals.length > 1) throw new Error(`${what} takes one EMAIL\n\n${USERS_HELP}`);
  if (!/^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+$/u.test(e) || e.length > 320)
    throw new Error(`not an email address: ${e}`);
  return e;
}

function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) for (const [i, c] of r.entries()) widths[i] = Math.max(widths[i] ?? 0, c.length);
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export async function usersCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { ...COMMON, org: { type: 'string' }, role: { type: 'string' } },
  });
  if (values.help || sub === undefined) {
    console.log(USERS_HELP);
    return;
  }
  switch (sub) {
    case 'add': {
      const who = email(positionals, 'users add');
      const org = values.org ?? DEFAULT_ORGANIZATION;
      const role = roleFlag(values.role);
      const r = await withPlatformPool(values, (pool) => addMember(pool, who, org, role));
      console.log(
        r.previousRole
          ? `${who} is now ${role} of ${org} (was ${r.previousRole}).`
          : `Added ${who} to ${org} as ${role}${r.created ? ' (new user)' : ''}. Create a token with: strata tokens create --user ${who}`,
      );
      return;
    }
    case 'list': {
      const users = await withPlatformPool(values, (pool) => listUsers(pool, values.org));
      if (values.json) {
        console.log(JSON.stringify(users, null, 2));
        return;
      }
      console.log(
        table([
          ['EMAIL', 'ORGANIZATION', 'ROLE', 'USER ID'],
          ...users.map((u) => [u.email, u.organization ?? '-', u.role ?? '-', u.userId]),
        ]),
      );
      return;
    }
    case 'remove': {
      const who = email(positionals, 'users remove');
      await withPlatformPool(values, (pool) => removeMember(pool, who, values.org));
      console.log(
        values.org ? `Removed ${who} from ${values.org}.` : `Deleted user ${who} and their tokens.`,
      );
      return;
    }
    default:
      throw new Error(`unknown users command "${sub}"\n\n${USERS_HELP}`);
  }
}

export async function tokensCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { ...COMMON, user: { type: 'string' }, name: { type: 'string' } },
  });
  if (values.help || sub === undefined) {
    console.log(USERS_HELP);
    return;
  }
  switch (sub) {
    case 'create': {
      if (!values.user) throw new Error(`tokens create needs --user EMAIL\n\n${USERS_HELP}`);
      const name = values.name ?? 'cli';
      if (name.length > 256 || name.includes('\u0000'))
        throw new Error('--name must be at most 256 characters');
      const user = values.user;
      const t = await withPlatformPool(values, (pool) => createToken(pool, user, name));
      console.log(
        `${t.token}\n\nToken ${t.id} for ${values.user}. It is shown only this once: store it now (Management API: Authorization: Bearer <token>).`,
      );
      return;
    }
    case 'list': {
      const tokens = await withPlatformPool(values, (pool) => listTokens(pool, values.user));
      if (values.json) {
        console.log(JSON.stringify(tokens, null, 2));
        return;
      }
      console.log(
        table([
          ['ID', 'USER', 'NAME', 'CREATED', 'LAST USED'],
          ...tokens.map((t) => [t.id, t.email, t.name, t.createdAt, t.lastUsedAt ?? 'never']),
        ]),
      );
      return;
    }
    case 'revoke': {
      const id = positionals[0];
      if (!id || positionals.length > 1) throw new Error(`tokens revoke takes one TOKEN_ID\n\n${USERS_HELP}`);
      await withPlatformPool(values, (pool) => revokeToken(pool, id));
      console.log(`Revoked token ${id}.`);
      return;
    }
    default:
      throw new Error(`unknown tokens command "${sub}"\n\n${USERS_HELP}`);
  }
}
