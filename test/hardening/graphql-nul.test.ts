/**
 * A NUL character anywhere in a GraphQL request (variables, string literals, GET parameters,
 * headers) gets a GraphQL error (or the HTTP parser's 400) and never keeps a pooled client:
 * after more such requests than the pool has clients, the pool has none lent out and a normal
 * request is answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJwt } from '../../src/auth/jwt.js';
import {
  rawRequest,
  settledCheckedOut,
  startGraphQLPlatform,
  type GraphQLPlatform,
} from './graphql-platform.js';

let gp: GraphQLPlatform;

beforeAll(async () => {
  gp = await startGraphQLPlatform();
});
afterAll(async () => {
  await gp?.close();
});

const NUL = '\u0000';
const BY_EMAIL =
  'query Q($e: String) { accountCollection(filter: {email: {eq: $e}}) { edges { node { id } } } }';
const NORMAL = { query: '{ accountCollection(orderBy: [{id: AscNullsLast}]) { edges { node { email } } } }' };
const NORMAL_ANSWER = {
  data: { accountCollection: { edges: [{ node: { email: 'a@x.com' } }, { node: { email: 'b@x.com' } }] } },
};
// pg_graphql takes `variables` as jsonb: PostgreSQL refuses any \u0000 in it before pg_graphql runs.
const IN_VARIABLES = { data: null, errors: [{ message: 'unsupported Unicode escape sequence' }] };
// A literal reaches PostgreSQL as text, which cannot hold a NUL either.
const IN_TEXT = { data: null, errors: [{ message: 'invalid byte sequence for encoding "UTF8": 0x00' }] };

async function expectHealthy(): Promise<void> {
  expect(await settledCheckedOut(gp)).toBe(0);
  const r = await gp.post(NORMAL);
  expect(r).toEqual({ status: 200, json: NORMAL_ANSWER });
}

describe('NUL characters in GraphQL input', () => {
  it('in a string variable: 200 with a GraphQL error, every time, and no client kept', {
    timeout: 30_000,
  }, async () => {
    // More requests than the project pool has clients (10): one leaked client each would hang the rest.
    for (let i = 0; i < 25; i++) {
      const r = await gp.post({ query: BY_EMAIL, variables: { e: `a${NUL}b${i}` } });
      expect(r).toEqual({ status: 200, json: IN_VARIABLES });
    }
    await expectHealthy();
  });

  it('anywhere in the variables (nested, in a key, unused): the same error', async () => {
    for (const variables of [
      { e: 'a@x.com', unused: { deep: [1, [`x${NUL}`]] } },
      { e: 'a@x.com', [`k${NUL}`]: 1 },
    ]) {
      expect(await gp.post({ query: BY_EMAIL, variables })).toEqual({ status: 200, json: IN_VARIABLES });
    }
    await expectHealthy();
  });

  it('in a string literal of a filter, an insert and an update: the text error, no client kept', {
    timeout: 30_000,
  }, async () => {
    const docs = [
      '{ accountCollection(filter: {email: {eq: "a\\u0000b"}}) { edges { node { id } } } }',
      '{ accountCollection(filter: {email: {in: ["ok", "a\\u0000b"]}}) { edges { node { id } } } }',
      'mutation { insertIntoAccountCollection(objects: [{email: "x\\u0000y"}]) { affectedCount } }',
      'mutation { updateAccountCollection(set: {email: "x\\u0000"}, filter: {id: {eq: 1}}) { affectedCount } }',
    ];
    for (let i = 0; i < 4; i++)
      for (const query of docs) expect(await gp.post({ query })).toEqual({ status: 200, json: IN_TEXT });
    await expectHealthy();
    // Nothing was written.
    const r = await gp.post({ query: '{ accountCollection { totalCount } }' });
    expect(r.json).toEqual({ data: { accountCollection: { totalCount: 2 } } });
  });

  it('as a raw character in the document: a syntax error', async () => {
    const r = await gp.post({ query: `{ accountCollection { edges { node { id } } } }${NUL}` });
    expect(r.status).toBe(200);
    expect(r.json.errors[0].message).toMatch(/^Syntax Error: Unexpected character: U\+0000/);
    expect(r.json.data).toBeUndefined();
    await expectHealthy();
  });

  it('in GET parameters: the same answers as over POST', async () => {
    const get = async (params: Record<string, string>) => {
      const res = await fetch(`${gp.endpoint}?${new URLSearchParams(params)}`, {
        headers: { apikey: gp.project.anonKey, accept: 'application/json' },
      });
      return { status: res.status, json: await res.json() };
    };
    for (let i = 0; i < 12; i++)
      expect(await get({ query: BY_EMAIL, variables: JSON.stringify({ e: `a${NUL}` }) })).toEqual({
        status: 200,
        json: IN_VARIABLES,
      });
    expect(
      await get({ query: '{ accountCollection(filter: {email: {eq: "\\u0000"}}) { totalCount } }' }),
    ).toEqual({ status: 200, json: IN_TEXT });
    await expectHealthy();
  });

  it('in the apikey or Authorization header: refused by the HTTP parser, no client kept', async () => {
    const body = JSON.stringify(NORMAL);
    for (const header of [`apikey: ${gp.project.anonKey}${NUL}x`, `Authorization: Bearer ab${NUL}cd`]) {
      const head = [
        'POST /graphql/v1 HTTP/1.1',
        `Host: 127.0.0.1`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        header,
        'Connection: close',
      ].join('\r\n');
      const status = await rawRequest(gp.endpoint, Buffer.from(`${head}\r\n\r\n${body}`, 'latin1'));
      expect(status).toBe(400);
    }
    await expectHealthy();
  });

  it('in a signed JWT claim: the claim reaches SQL intact, the request is answered', async () => {
    const token = await signJwt(gp.project.jwtSecret, {
      role: 'anon',
      sub: `u${NUL}1`,
      exp: Math.floor(Date.now() / 1000) + 60,
    });
    const r = await gp.post(NORMAL, { authorization: `Bearer ${token}` });
    expect(r).toEqual({ status: 200, json: NORMAL_ANSWER });
    await expectHealthy();
  });
});
