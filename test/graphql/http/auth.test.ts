/** Every way a request's credentials can fail: each is a 401 with a JSON error, and the engine never runs. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGraphQLHandler } from '../../../src/graphql/http/handler.js';
import { mintApiKey } from '../../../src/auth/jwt.js';
import { graphqlTestDb, listen, algNoneToken, signJwt, type GraphQLTestDb } from './support.js';
import { postGraphQL } from '../../support/graphql.js';

let t: GraphQLTestDb;
let srv: Awaited<ReturnType<typeof listen>>;
let endpoint: string;
const body = { query: '{ __typename }' };

beforeAll(async () => {
  t = await graphqlTestDb('gqlauth');
  srv = await listen(
    createGraphQLHandler({
      pool: t.pool,
      jwtSecret: t.jwtSecret,
      anonKey: t.anonKey,
      serviceRoleKey: t.serviceRoleKey,
    }),
  );
  endpoint = srv.url + '/graphql/v1';
});

afterAll(async () => {
  await srv?.close();
  await t?.close();
});

async function expect401(headers: Record<string, string>, message: RegExp) {
  const r = await postGraphQL(endpoint, body, headers);
  expect(r.status).toBe(401);
  expect(r.headers.get('content-type')).toMatch(/application\/json/);
  expect(r.json.message).toMatch(message);
  expect(r.json.errors).toEqual([{ message: r.json.message }]);
  // Nothing that looks like a token comes back.
  expect(r.text).not.toMatch(/eyJ/);
  return r;
}

describe('apikey', () => {
  it('missing apikey → 401', async () => {
    await expect401({}, /No API key found/);
  });

  it('wrong apikey → 401', async () => {
    await expect401({ apikey: 'not-a-key' }, /Invalid API key/);
  });

  it("another project's anon key → 401", async () => {
    const other = await mintApiKey('another-projects-secret-0123456789abcdef', 'anon', 'otherref');
    await expect401({ apikey: other }, /Invalid API key/);
  });

  it('an expired JWT as apikey → 401', async () => {
    const expired = await signJwt(t.jwtSecret, { role: 'anon', exp: Math.floor(Date.now() / 1000) - 60 });
    await expect401({ apikey: expired }, /Invalid API key/);
  });

  it('the header name is case-insensitive (apiKey, APIKEY)', async () => {
    for (const name of ['apiKey', 'APIKEY', 'apikey']) {
      const r = await postGraphQL(endpoint, body, { [name]: t.anonKey });
      expect(r.status, name).toBe(200);
    }
  });

  it('the anon and service_role keys are accepted', async () => {
    expect((await postGraphQL(endpoint, body, { apikey: t.anonKey })).status).toBe(200);
    expect((await postGraphQL(endpoint, body, { apikey: t.serviceRoleKey })).status).toBe(200);
  });
});

describe('Authorization: Bearer', () => {
  it('an expired user JWT → 401 "JWT expired"', async () => {
    const expired = await signJwt(t.jwtSecret, {
      role: 'authenticated',
      sub: 'u1',
      exp: Math.floor(Date.now() / 1000) - 60,
    });
    await expect401({ apikey: t.anonKey, authorization: `Bearer ${expired}` }, /JWT expired/);
  });

  it('a JWT signed with another secret → 401', async () => {
    const forged = await signJwt('some-other-secret-0123456789abcdef0123', { role: 'service_role' });
    await expect401({ apikey: t.anonKey, authorization: `Bearer ${forged}` }, /signature/);
  });

  it('alg none → 401', async () => {
    await expect401(
      { apikey: t.anonKey, authorization: `Bearer ${algNoneToken({ role: 'service_role' })}` },
      /invalid JWT/,
    );
  });

  it('alg none as the apikey → 401', async () => {
    await expect401({ apikey: algNoneToken({ role: 'service_role' }) }, /Invalid API key/);
  });

  it('a role that is not an API role → 401', async () => {
    const superuser = await signJwt(t.jwtSecret, { role: 'postgres' });
    await expect401(
      { apikey: t.anonKey, authorization: `Bearer ${superuser}` },
      /role "postgres" is not allowed/,
    );
  });

  it('a malformed token → 401', async () => {
    await expect401({ apikey: t.anonKey, authorization: 'Bearer not.a.jwt' }, /invalid JWT/);
  });

  it('a valid user JWT acts as that user (role and claims reach SQL)', async () => {
    const c = await (await import('../../support/database.js')).connect(t.db.url);
    await c.query(`
      create table public.note (id int primary key, owner text not null, body text not null);
      alter table public.note enable row level security;
      create policy mine on public.note for select to authenticated using (owner = current_setting('request.jwt.claims', true)::json->>'sub');
      grant select on public.note to anon, authenticated;
      insert into public.note values (1, 'alice', 'alice note'), (2, 'bob', 'bob note');`);
    await c.end();
    const token = await signJwt(
      t.jwtSecret,
      { role: 'authenticated', sub: 'alice' },
      { expiresInSeconds: 60 },
    );
    const q = { query: '{ noteCollection { edges { node { body } } } }' };
    const asAlice = await postGraphQL(endpoint, q, { apikey: t.anonKey, authorization: `Bearer ${token}` });
    expect(asAlice.status).toBe(200);
    expect(JSON.stringify(asAlice.json)).toContain('alice note');
    expect(JSON.stringify(asAlice.json)).not.toContain('bob note');
    const bobToken = await signJwt(
      t.jwtSecret,
      { role: 'authenticated', sub: 'bob' },
      { expiresInSeconds: 60 },
    );
    const asBob = await postGraphQL(endpoint, q, { apikey: t.anonKey, authorization: `Bearer ${bobToken}` });
    expect(asBob.json).toEqual({ data: { noteCollection: { edges: [{ node: { body: 'bob note' } }] } } });
  });
});
