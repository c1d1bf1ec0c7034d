/**
 * Organization roles on every Management API route: the routes are enumerated from the running
 * app, so a route without a row here (or in src/management/http/permissions.ts) fails this test.
 * Each route is called by a member of every role and by an outsider; a role below the route's
 * minimum gets 403, the others the route's own answer (a body that fails validation where the
 * success would change more than the test needs: the role check comes first either way).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import type { Platform } from '../../src/platform/platform.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api, createOtherUser } from '../support/management.js';
import { registerManagementHttp } from '../../src/management/http/setup.js';
import { ROUTE_PERMISSIONS } from '../../src/management/http/permissions.js';
import { addMember, createToken } from '../../src/management/organizations/members.js';

type Role = 'read_only' | 'developer' | 'administrator' | 'owner';
const ROLES: Role[] = ['read_only', 'developer', 'administrator', 'owner'];
const RANK: Record<Role, number> = { read_only: 0, developer: 1, administrator: 2, owner: 3 };

interface Ctx {
  ref: string;
  slug: string;
  created: Partial<Record<Role, string>>;
}
interface Call {
  path: string;
  body?: unknown;
}
interface Row {
  /** Least role allowed (independent of the code's table: the two must agree). */
  min: Role;
  /** Whether a member of no organization gets an answer about their own data (vs 403). */
  outsiderAllowed?: boolean;
  allowed: number;
  call: (ctx: Ctx, role: Role | 'outsider') => Call;
}

const SOURCE = 'Deno.serve(() => new Response("hi"))';
const fnPath = (c: Ctx, tail = '') => `/v1/projects/${c.ref}/functions/roles-fn${tail}`;

const MATRIX: Record<string, Row> = {
  'GET /v1/projects/:ref/config/database/pooler': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/config/database/pooler` }),
  },
  'PATCH /v1/projects/:ref/config/database/pooler': {
    min: 'administrator',
    allowed: 404,
    call: (c) => ({ path: `/v1/projects/${c.ref}/config/database/pooler`, body: {} }),
  },
  'GET /v1/projects/:ref/config/database/pgbouncer': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/config/database/pgbouncer` }),
  },
  'GET /v1/projects/:ref/config/database/postgres': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/config/database/postgres` }),
  },
  'PUT /v1/projects/:ref/config/database/postgres': {
    min: 'administrator',
    allowed: 200,
    call: (c) => ({
      path: `/v1/projects/${c.ref}/config/database/postgres`,
      body: { statement_timeout: '30s' },
    }),
  },
  'GET /v1/projects/:ref/ssl-enforcement': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/ssl-enforcement` }),
  },
  'PUT /v1/projects/:ref/ssl-enforcement': {
    min: 'administrator',
    allowed: 200,
    call: (c) => ({
      path: `/v1/projects/${c.ref}/ssl-enforcement`,
      body: { requestedConfig: { database: false } },
    }),
  },
  'GET /v1/projects/:ref/database/migrations': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/database/migrations` }),
  },
  'POST /v1/projects/:ref/database/migrations': {
    min: 'developer',
    allowed: 400,
    call: (c) => ({ path: `/v1/projects/${c.ref}/database/migrations`, body: {} }),
  },
  'PATCH /v1/projects/:ref/database/password': {
    min: 'administrator',
    allowed: 400,
    call: (c) => ({ path: `/v1/projects/${c.ref}/database/password`, body: {} }),
  },
  'POST /v1/projects/:ref/cli/login-role': {
    min: 'developer',
    allowed: 404,
    call: (c) => ({ path: `/v1/projects/${c.ref}/cli/login-role`, body: {} }),
  },
  'DELETE /v1/projects/:ref/cli/login-role': {
    min: 'developer',
    allowed: 404,
    call: (c) => ({ path: `/v1/projects/${c.ref}/cli/login-role` }),
  },
  'POST /v1/projects/:ref/database/query': {
    min: 'developer',
    allowed: 201,
    call: (c) => ({ path: `/v1/projects/${c.ref}/database/query`, body: { query: 'select 1 as one' } }),
  },
  'POST /v1/projects/:ref/database/query/read-only': {
    min: 'developer',
    allowed: 201,
    call: (c) => ({
      path: `/v1/projects/${c.ref}/database/query/read-only`,
      body: { query: 'select 1 as one' },
    }),
  },
  'GET /v1/projects/:ref/health': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/health?services=db` }),
  },
  'GET /v1/projects/:ref/upgrade/status': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/upgrade/status` }),
  },
  'POST /v1/projects/:ref/upgrade': {
    min: 'administrator',
    allowed: 404,
    call: (c) => ({ path: `/v1/projects/${c.ref}/upgrade`, body: {} }),
  },
  'GET /v1/projects/:ref/config/storage': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/config/storage` }),
  },
  'PATCH /v1/projects/:ref/config/storage': {
    min: 'administrator',
    allowed: 404,
    call: (c) => ({ path: `/v1/projects/${c.ref}/config/storage`, body: {} }),
  },
  'GET /v1/projects/:ref/config/auth': {
    min: 'read_only',
    allowed: 404,
    call: (c) => ({ path: `/v1/projects/${c.ref}/config/auth` }),
  },
  'PATCH /v1/projects/:ref/config/auth': {
    min: 'administrator',
    allowed: 404,
    call: (c) => ({ path: `/v1/projects/${c.ref}/config/auth`, body: {} }),
  },
  'GET /v1/projects/:ref/postgrest': {
    min: 'read_only',
    allowed: 404,
    call: (c) => ({ path: `/v1/projects/${c.ref}/postgrest` }),
  },
  'PATCH /v1/projects/:ref/postgrest': {
    min: 'administrator',
    allowed: 404,
    call: (c) => ({ path: `/v1/projects/${c.ref}/postgrest`, body: {} }),
  },
  'GET /v1/projects/:ref/database/backups': {
    min: 'read_only',
    allowed: 404,
    call: (c) => ({ path: `/v1/projects/${c.ref}/database/backups` }),
  },
  'POST /v1/projects/:ref/database/backups/restore': {
    min: 'administrator',
    allowed: 404,
    call: (c) => ({ path: `/v1/projects/${c.ref}/database/backups/restore`, body: {} }),
  },
  'POST /v1/projects/:ref/database/backups/restore-pitr': {
    min: 'administrator',
    allowed: 404,
    call: (c) => ({ path: `/v1/projects/${c.ref}/database/backups/restore-pitr`, body: {} }),
  },
  'POST /v1/projects/:ref/database/backups/restore-point': {
    min: 'administrator',
    allowed: 404,
    call: (c) => ({ path: `/v1/projects/${c.ref}/database/backups/restore-point`, body: {} }),
  },
  'GET /v1/projects/:ref/storage/s3-access-keys': {
    min: 'developer',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/storage/s3-access-keys` }),
  },
  'POST /v1/projects/:ref/storage/s3-access-keys': {
    min: 'developer',
    allowed: 201,
    call: (c, r) => ({
      path: `/v1/projects/${c.ref}/storage/s3-access-keys`,
      body: { description: `by ${r}` },
    }),
  },
  'DELETE /v1/projects/:ref/storage/s3-access-keys/:id': {
    min: 'developer',
    allowed: 404,
    call: (c) => ({
      path: `/v1/projects/${c.ref}/storage/s3-access-keys/00000000-0000-0000-0000-000000000000`,
    }),
  },
  'PUT /v1/projects/:ref/functions': {
    min: 'developer',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/functions`, body: [] }),
  },
  'POST /v1/projects/:ref/functions/deploy': {
    min: 'developer',
    allowed: 400,
    call: (c) => ({ path: `/v1/projects/${c.ref}/functions/deploy`, body: {} }),
  },
  'GET /v1/projects/:ref/functions/:function_slug/logs': {
    min: 'developer',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/functions/roles-fn/logs` }),
  },
  'GET /v1/organizations': {
    min: 'read_only',
    outsiderAllowed: true,
    allowed: 200,
    call: () => ({ path: '/v1/organizations' }),
  },
  'POST /v1/organizations': {
    min: 'read_only',
    outsiderAllowed: true,
    allowed: 201,
    call: (_c, r) => ({ path: '/v1/organizations', body: { name: `org of ${r}` } }),
  },
  'GET /v1/organizations/:slug': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/organizations/${c.slug}` }),
  },
  'GET /v1/organizations/:slug/members': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/organizations/${c.slug}/members` }),
  },
  'GET /v1/projects': {
    min: 'read_only',
    outsiderAllowed: true,
    allowed: 200,
    call: () => ({ path: '/v1/projects' }),
  },
  'POST /v1/projects': {
    min: 'administrator',
    allowed: 201,
    call: (c, r) => ({
      path: '/v1/projects',
      body: { db_pass: 'x', name: `made by ${r}`, organization_slug: c.slug },
    }),
  },
  'GET /v1/projects/:ref': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}` }),
  },
  'DELETE /v1/projects/:ref': {
    min: 'administrator',
    allowed: 200,
    call: (c, r) => ({ path: `/v1/projects/${(r !== 'outsider' && c.created[r]) || c.ref}` }),
  },
  'GET /v1/projects/:ref/api-keys': {
    min: 'developer',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/api-keys` }),
  },
  'POST /v1/projects/:ref/console/role-token': {
    min: 'developer',
    allowed: 201,
    call: (c) => ({
      path: `/v1/projects/${c.ref}/console/role-token`,
      body: { role: 'authenticated', sub: '6f1c2b0e-3a4d-4e5f-8a9b-0c1d2e3f4a5b' },
    }),
  },
  'GET /v1/projects/:ref/secrets': {
    min: 'developer',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/secrets` }),
  },
  'POST /v1/projects/:ref/secrets': {
    min: 'developer',
    allowed: 201,
    call: (c) => ({ path: `/v1/projects/${c.ref}/secrets`, body: [{ name: 'ROLE_TEST', value: 'v' }] }),
  },
  'DELETE /v1/projects/:ref/secrets': {
    min: 'developer',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/secrets`, body: ['ROLE_TEST'] }),
  },
  'GET /v1/projects/:ref/types/typescript': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/types/typescript` }),
  },
  'POST /v1/projects/:ref/functions': {
    min: 'developer',
    allowed: 201,
    call: (c, r) => ({ path: `/v1/projects/${c.ref}/functions`, body: { slug: `fn-${r}`, body: SOURCE } }),
  },
  'GET /v1/projects/:ref/functions': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/functions` }),
  },
  'GET /v1/projects/:ref/functions/:function_slug': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: fnPath(c) }),
  },
  'PATCH /v1/projects/:ref/functions/:function_slug': {
    min: 'developer',
    allowed: 200,
    call: (c, r) => ({ path: fnPath(c), body: { name: `renamed by ${r}` } }),
  },
  'DELETE /v1/projects/:ref/functions/:function_slug': {
    min: 'developer',
    allowed: 200,
    call: (c, r) => ({ path: `/v1/projects/${c.ref}/functions/fn-${r}` }),
  },
  'POST /v1/projects/:ref/functions/:function_slug/invoke': {
    min: 'developer',
    allowed: 200,
    call: (c) => ({ path: `${fnPath(c)}/invoke`, body: { method: 'GET', role: 'anon' } }),
  },
  'GET /v1/projects/:ref/functions/:function_slug/body': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: fnPath(c, '/body') }),
  },
  'GET /v1/projects/:ref/functions/:function_slug/runtime-config': {
    min: 'developer',
    allowed: 200,
    call: (c) => ({ path: fnPath(c, '/runtime-config') }),
  },
  'GET /v1/projects/:ref/custom-hostname': {
    min: 'read_only',
    allowed: 400, // no custom hostname configured yet
    call: (c) => ({ path: `/v1/projects/${c.ref}/custom-hostname` }),
  },
  'DELETE /v1/projects/:ref/custom-hostname': {
    min: 'administrator',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/custom-hostname` }),
  },
  'POST /v1/projects/:ref/custom-hostname/initialize': {
    min: 'administrator',
    allowed: 400,
    call: (c) => ({ path: `/v1/projects/${c.ref}/custom-hostname/initialize`, body: {} }),
  },
  'POST /v1/projects/:ref/custom-hostname/reverify': {
    min: 'administrator',
    allowed: 400,
    call: (c) => ({ path: `/v1/projects/${c.ref}/custom-hostname/reverify` }),
  },
  'POST /v1/projects/:ref/custom-hostname/activate': {
    min: 'administrator',
    allowed: 400,
    call: (c) => ({ path: `/v1/projects/${c.ref}/custom-hostname/activate` }),
  },
  'GET /v1/projects/:ref/pgsodium': {
    min: 'administrator',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/pgsodium` }),
  },
  'PUT /v1/projects/:ref/pgsodium': {
    min: 'administrator',
    allowed: 400,
    call: (c) => ({ path: `/v1/projects/${c.ref}/pgsodium`, body: { root_key: 'short' } }),
  },
  'POST /v1/projects/:ref/network-bans/retrieve': {
    min: 'read_only',
    allowed: 201,
    call: (c) => ({ path: `/v1/projects/${c.ref}/network-bans/retrieve` }),
  },
  'DELETE /v1/projects/:ref/network-bans': {
    min: 'administrator',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/network-bans`, body: { ipv4_addresses: [] } }),
  },
  'GET /v1/projects/:ref/network-restrictions': {
    min: 'read_only',
    allowed: 200,
    call: (c) => ({ path: `/v1/projects/${c.ref}/network-restrictions` }),
  },
  'POST /v1/projects/:ref/network-restrictions/apply': {
    min: 'administrator',
    allowed: 400,
    call: (c) => ({
      path: `/v1/projects/${c.ref}/network-restrictions/apply`,
      body: { dbAllowedCidrs: 'bad' },
    }),
  },
  'PATCH /v1/projects/:ref/network-restrictions': {
    min: 'administrator',
    allowed: 400,
    call: (c) => ({
      path: `/v1/projects/${c.ref}/network-restrictions`,
      body: { add: { dbAllowedCidrs: ['bad'] } },
    }),
  },
};

let tp: TestPlatform;
const tokens = {} as Record<Role | 'outsider', string>;
const ctx: Ctx = { ref: '', slug: 'default-org', created: {} };

beforeAll(async () => {
  tp = await startTestPlatform({ rateLimitMax: 1_000_000 });
  ctx.ref = tp.platform.defaultRef;
  tokens.owner = tp.platform.defaultAccessToken;
  for (const role of ['read_only', 'developer', 'administrator'] as const) {
    const email = `${role}@roles.test`;
    await addMember(tp.platform.pool, email, 'default-org', role);
    tokens[role] = (await createToken(tp.platform.pool, email, 'roles test')).token;
  }
  tokens.outsider = (await createOtherUser(tp, 'outsider')).token;
  const fn = await api(tp, 'POST', `/v1/projects/${ctx.ref}/functions`, {
    body: { slug: 'roles-fn', body: SOURCE },
  });
  expect(fn.status).toBe(201);
}, 120_000);

afterAll(async () => {
  await tp?.close();
});

describe('organization roles on every Management API route', () => {
  it('every route the app registers has a row in the matrix, and the code agrees with it', () => {
    const routes = [...tp.services.management.routeKeys].sort();
    expect(routes.length).toBeGreaterThan(25);
    expect(routes).toEqual(Object.keys(MATRIX).sort());
    for (const [key, row] of Object.entries(MATRIX))
      expect([key, ROUTE_PERMISSIONS[key]?.role]).toEqual([key, row.min]);
  });

  it('a management route without a row in the permission table stops the server from starting', async () => {
    const app = Fastify();
    const starting = (async () => {
      await app.register(
        async (scope) => {
          registerManagementHttp(scope, tp.platform as Platform, new Set());
          scope.get('/projects/:ref/forgotten', async () => ({ leaked: true }));
        },
        { prefix: '/v1' },
      );
      await app.ready();
    })();
    await expect(starting).rejects.toThrow(/GET \/v1\/projects\/:ref\/forgotten has no row/);
    await app.close().catch(() => {});
  });

  it('route × role → expected status', async () => {
    const seen: string[] = [];
    const wanted: string[] = [];
    for (const [key, row] of Object.entries(MATRIX)) {
      const [method = ''] = key.split(' ');
      for (const role of [...ROLES, 'outsider'] as const) {
        const call = row.call(ctx, role);
        const r = await api(tp, method, call.path, { token: tokens[role], body: call.body });
        const ok = role === 'outsider' ? !!row.outsiderAllowed : RANK[role] >= RANK[row.min];
        seen.push(`${key} as ${role} → ${r.status}`);
        wanted.push(`${key} as ${role} → ${ok ? row.allowed : 403}`);
        if (!ok)
          expect(r.body.message, `${key} as ${role}`).toMatch(
            /Forbidden resource|does not allow this action/,
          );
        if (key === 'POST /v1/projects' && r.status === 201 && role !== 'outsider')
          ctx.created[role] = r.body.id;
      }
    }
    expect(seen).toEqual(wanted);
  }, 300_000);

  it('a read_only member cannot see secrets, keys or the root key, nor write', async () => {
    const ro = tokens.read_only;
    for (const [method, path, body] of [
      ['GET', `/v1/projects/${ctx.ref}/secrets`],
      ['GET', `/v1/projects/${ctx.ref}/api-keys`],
      ['GET', `/v1/projects/${ctx.ref}/pgsodium`],
      ['POST', `/v1/projects/${ctx.ref}/secrets`, [{ name: 'X', value: 'y' }]],
    ] as const) {
      const r = await api(tp, method, path, { token: ro, body });
      expect(r.status).toBe(403);
      expect(r.text).not.toContain('service_role');
    }
  });

  it('the member list names every member with the hosted API role names', async () => {
    const r = await api(tp, 'GET', '/v1/organizations/default-org/members', { token: tokens.read_only });
    expect(r.status).toBe(200);
    const byEmail = Object.fromEntries(
      r.body.map((m: { email: string; role_name: string }) => [m.email, m.role_name]),
    );
    expect(byEmail).toMatchObject({
      'admin@localhost': 'Owner',
      'administrator@roles.test': 'Administrator',
      'developer@roles.test': 'Developer',
      'read_only@roles.test': 'Read only',
    });
    for (const m of r.body)
      expect(Object.keys(m).sort()).toEqual(['email', 'mfa_enabled', 'role_name', 'user_id', 'user_name']);
  });

  it('a demoted member loses access at once', async () => {
    await addMember(tp.platform.pool, 'developer@roles.test', 'default-org', 'read_only');
    expect(
      (await api(tp, 'GET', `/v1/projects/${ctx.ref}/secrets`, { token: tokens.developer })).status,
    ).toBe(403);
    await addMember(tp.platform.pool, 'developer@roles.test', 'default-org', 'developer');
    expect(
      (await api(tp, 'GET', `/v1/projects/${ctx.ref}/secrets`, { token: tokens.developer })).status,
    ).toBe(200);
  });
});
