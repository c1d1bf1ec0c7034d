/**
 * The API roles' limits hold through every door that runs SQL as them (issue 29, item 7): anon's
 * 3 s and authenticated's 8 s statement_timeout, applied per request in the statement that switches
 * role (`SET LOCAL ROLE` alone applies none of a role's settings).
 *
 * Written as the attacker: an anon end user with the project's anon key (and an authenticated one
 * with a token signed by the project's secret) calling the tenant's slow functions; and a tenant
 * whose function, run as anon, rewrites anon's settings (globally and for another project's
 * database) to lift the limit on a project that is not theirs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { signJwt } from '../../src/auth/jwt.js';
import { resolveWithPool } from '../../src/index.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { startGraphQLPlatform, type GraphQLPlatform } from '../hardening/graphql-platform.js';
import { postGraphQL } from '../support/graphql.js';

// The tenant's own functions: slow ones (a mutation, a query, an RLS policy's) and one that shows
// the limit its caller runs with.
const FUNCTIONS = `
  create function public.slow(seconds float8) returns int volatile language sql
    as $$ select 1 from pg_sleep(seconds) $$;
  create function public.slow_read(seconds float8) returns int stable language sql
    as $$ select 1 from pg_sleep(seconds) $$;
  create function public.timeout_now() returns text stable language sql
    as $$ select current_setting('statement_timeout') $$;
  create function public.slow_policy() returns boolean volatile language sql
    as $$ select true from pg_sleep(10) $$;`;

// A tenant function that, run as anon, rewrites anon's settings: globally, and for another
// project's database (PostgreSQL lets a role change its own settings, in any database).
const LOOSEN = `
  create function public.loosen(other_db text) returns text volatile language plpgsql as $$
  begin
    execute 'alter role anon set statement_timeout = 0';
    execute format('alter role anon in database %I set statement_timeout = 0', other_db);
    execute format('alter role anon in database %I set statement_timeout = 0', current_database());
    return current_user;
  end $$;`;

let gp: GraphQLPlatform;
let other: ProjectContext;

async function sql(url: string, text: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  gp = await startGraphQLPlatform();
  await sql(gp.project.superuserUrl, FUNCTIONS + LOOSEN);
  // Another tenant's project on the same server, with the same kind of function.
  other = await gp.tp.platform.createProject({ name: 'other', organizationId: gp.project.organizationId });
  await sql(
    other.superuserUrl,
    `comment on schema public is '@graphql({"inflect_names": true})'; ${FUNCTIONS}`,
  );
}, 120_000);

afterAll(async () => {
  // Whatever a test left in the shared roles' settings goes back to what roles.sql sets.
  if (gp)
    await sql(
      gp.project.superuserUrl,
      `alter role anon reset all; alter role anon set statement_timeout = '3s';
       do $$ declare d text; begin
         for d in select datname from pg_database where not datistemplate loop
           execute format('alter role anon in database %I reset all', d);
         end loop; end $$;`,
    ).catch(() => {});
  await gp?.close();
});

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = Date.now();
  const value = await work();
  return { ms: Date.now() - start, value };
}

async function userToken(project: ProjectContext): Promise<string> {
  return signJwt(project.jwtSecret, {
    role: 'authenticated',
    sub: '00000000-0000-4000-8000-000000000001',
    exp: Math.floor(Date.now() / 1000) + 600,
  });
}

async function postAs(project: ProjectContext, query: string, bearer?: string) {
  const prefix = project.ref === gp.project.ref ? '' : `/project/${project.ref}`;
  const res = await postGraphQL(
    `${gp.tp.url}${prefix}/graphql/v1`,
    { query },
    { apikey: project.anonKey, ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
  );
  return { status: res.status, json: res.json };
}

const TIMED_OUT = /statement timeout/;

describe("anon's 3 s through every GraphQL door", () => {
  it('an anon mutation calling pg_sleep(10) is cancelled at 3 s, not run for 10', async () => {
    const { ms, value } = await timed(() => gp.post({ query: 'mutation { slow(seconds: 10) }' }));
    expect(value.json.errors?.[0]?.message).toMatch(TIMED_OUT);
    expect(ms).toBeLessThan(7_000);
  });

  it('an anon query calling a slow stable function is cancelled at 3 s', async () => {
    const { ms, value } = await timed(() => gp.post({ query: '{ slowRead(seconds: 10) }' }));
    expect(value.json.errors?.[0]?.message).toMatch(TIMED_OUT);
    expect(ms).toBeLessThan(7_000);
  });

  it('a GraphQL GET runs with 3 s', async () => {
    const res = await fetch(`${gp.endpoint}?query=${encodeURIComponent('{ timeoutNow }')}`, {
      headers: { apikey: gp.project.anonKey },
    });
    expect(await res.json()).toEqual({ data: { timeoutNow: '3s' } });
  });

  it('resolveWithPool (the library entry) runs anon with 3 s', async () => {
    const out = await resolveWithPool(
      gp.project.pool,
      { role: 'anon', claims: { role: 'anon' } },
      {
        query: '{ timeoutNow }',
      },
    );
    expect(out).toEqual({ data: { timeoutNow: '3s' } });
  });

  it('ten parallel slow anon mutations hold the pool for 3 s only; the project answers afterwards', async () => {
    const { ms, value } = await timed(() =>
      Promise.all(Array.from({ length: 10 }, () => gp.post({ query: 'mutation { slow(seconds: 20) }' }))),
    );
    for (const r of value) expect(r.json.errors?.[0]?.message).toMatch(TIMED_OUT);
    expect(ms).toBeLessThan(12_000);
    expect((await gp.post({ query: '{ timeoutNow }' })).json).toEqual({ data: { timeoutNow: '3s' } });
  });
});

describe("authenticated's 8 s and service_role's session value", () => {
  it('an authenticated user runs with 8 s: 4 s of sleep pass, 20 s are cancelled at 8 s', async () => {
    const token = await userToken(gp.project);
    expect((await postAs(gp.project, '{ timeoutNow }', token)).json).toEqual({ data: { timeoutNow: '8s' } });
    expect((await postAs(gp.project, 'mutation { slow(seconds: 4) }', token)).json).toEqual({
      data: { slow: 1 },
    });
    const { ms, value } = await timed(() => postAs(gp.project, 'mutation { slow(seconds: 20) }', token));
    expect(value.json.errors?.[0]?.message).toMatch(TIMED_OUT);
    expect(ms).toBeGreaterThanOrEqual(7_500);
    expect(ms).toBeLessThan(13_000);
  }, 30_000);

  it('service_role keeps the session value (no API limit of its own)', async () => {
    const { json } = await postAs(gp.project, '{ timeoutNow }', gp.project.serviceRoleKey);
    expect(json).toEqual({ data: { timeoutNow: '0' } });
  });
});

describe('Storage requests run as anon under the same limit', () => {
  it("an RLS policy calling the tenant's slow function is cancelled at 3 s (544 DatabaseTimeout)", async () => {
    await sql(
      gp.project.superuserUrl,
      `insert into storage.buckets (id, name, public) values ('limits', 'limits', true) on conflict do nothing;
       create policy "slow read" on storage.buckets for select to anon using (public.slow_policy());`,
    );
    try {
      const { ms, value } = await timed(() =>
        fetch(`${gp.tp.url}/storage/v1/bucket`, {
          headers: { apikey: gp.project.anonKey, authorization: `Bearer ${gp.project.anonKey}` },
        }),
      );
      expect(value.status).toBe(544);
      expect((await value.json()).error).toBe('DatabaseTimeout');
      expect(ms).toBeLessThan(7_000);
    } finally {
      await sql(gp.project.superuserUrl, 'drop policy "slow read" on storage.buckets');
    }
  });
});

describe("a tenant cannot steer another project's limits through the shared roles", () => {
  it("anon's own ALTER ROLE (global, and IN DATABASE of the other project) changes neither project", async () => {
    // The other tenant's anon runs with 3 s before.
    expect((await postAs(other, '{ timeoutNow }')).json).toEqual({ data: { timeoutNow: '3s' } });
    // The attacker's function, called as anon through GraphQL, rewrites anon's settings: PostgreSQL
    // allows it (a role may change its own settings, in any database).
    const loosened = await gp.post({
      query: `mutation { loosen(otherDb: ${JSON.stringify(other.dbName)}) }`,
    });
    expect(loosened.json).toEqual({ data: { loosen: 'anon' } });
    // Neither project's anon requests run unlimited afterwards.
    expect((await postAs(other, '{ timeoutNow }')).json).toEqual({ data: { timeoutNow: '3s' } });
    expect((await gp.post({ query: '{ timeoutNow }' })).json).toEqual({ data: { timeoutNow: '3s' } });
    const { ms, value } = await timed(() => postAs(other, 'mutation { slow(seconds: 10) }'));
    expect(value.json.errors?.[0]?.message).toMatch(TIMED_OUT);
    expect(ms).toBeLessThan(7_000);
  });
});
