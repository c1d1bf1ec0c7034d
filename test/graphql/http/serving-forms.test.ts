/**
 * The same endpoint behaviour in the three serving forms (Node http, Express, Fastify): the
 * engine's bytes for POST and GET, no mutations over GET, GraphiQL for browsers, the trailing-slash
 * path refused, body size and depth limits, CORS preflight.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express from 'express';
import Fastify from 'fastify';
import { createGraphQLHandler, type GraphQLHandler } from '../../../src/graphql/http/handler.js';
import { resolveWithPool } from '../../../src/graphql/engine.js';
import { graphqlTestDb, listen, TODOS_QUERY, type GraphQLTestDb } from './support.js';
import { postGraphQL, getGraphQL, http } from '../../support/graphql.js';

let t: GraphQLTestDb;
const closers: Array<() => Promise<void>> = [];
const bases: Record<string, string> = {};
const MAX_BODY = 4096;
const MAX_DEPTH = 4;

function handler(extra: { basePath?: string } = {}): GraphQLHandler {
  return createGraphQLHandler({
    pool: t.pool,
    jwtSecret: t.jwtSecret,
    anonKey: t.anonKey,
    serviceRoleKey: t.serviceRoleKey,
    maxBodyBytes: MAX_BODY,
    maxDepth: MAX_DEPTH,
    ...extra,
  });
}

beforeAll(async () => {
  t = await graphqlTestDb('gqlforms');

  const node = await listen(handler());
  closers.push(node.close);
  bases.node = node.url;

  const app = express();
  app.get('/other', (_req, res) => void res.json({ other: true }));
  app.use(handler({ basePath: '/api' }));
  const ex = await listen(app);
  closers.push(ex.close);
  bases.express = ex.url + '/api';

  const parsed = express();
  parsed.use(express.json());
  parsed.use(handler());
  const exParsed = await listen(parsed);
  closers.push(exParsed.close);
  bases['express+json'] = exParsed.url;

  const fastify = Fastify();
  await fastify.register(handler().fastifyPlugin);
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  closers.push(() => fastify.close());
  bases.fastify = `http://127.0.0.1:${(fastify.server.address() as { port: number }).port}`;
});

afterAll(async () => {
  for (const c of closers) await c().catch(() => {});
  await t?.close();
});

/** The engine's answer (a response body is PostgreSQL's JSON text, so compare values, not bytes). */
async function engineAnswer(
  query: string,
  variables: Record<string, unknown> | null = null,
): Promise<unknown> {
  return resolveWithPool(
    t.pool,
    { role: 'anon', claims: { role: 'anon' } },
    { query, variables, operationName: null },
  );
}

describe.each(['node', 'express', 'express+json', 'fastify'])('%s', (form) => {
  const url = () => bases[form]! + '/graphql/v1';
  const anon = () => ({ apikey: t.anonKey });

  it('POST application/json answers with the engine answer', async () => {
    const r = await postGraphQL(url(), { query: TODOS_QUERY }, anon());
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(r.text)).toEqual(await engineAnswer(TODOS_QUERY));
    expect(r.json.data.todoCollection.edges.map((e: { node: { title: string } }) => e.node.title)).toEqual([
      'write tests',
      'ship it',
    ]);
  });

  it('POST with variables and operationName', async () => {
    const query =
      'query One($id: Int) { todoCollection(filter: {id: {eq: $id}}) { edges { node { title } } } } query Other { __typename }';
    const r = await postGraphQL(url(), { query, variables: { id: 2 }, operationName: 'One' }, anon());
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ data: { todoCollection: { edges: [{ node: { title: 'ship it' } }] } } });
  });

  it('engine errors come back as the engine wrote them', async () => {
    const r = await postGraphQL(url(), { query: '{ nope }' }, anon());
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual(await engineAnswer('{ nope }'));
    expect(r.json.errors[0].message).toBe('Unknown field "nope" on type Query');
  });

  it("a document that does not parse gets the engine's parse error", async () => {
    const r = await postGraphQL(url(), { query: '{ todoCollection ' }, anon());
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual(await engineAnswer('{ todoCollection '));
  });

  it('GET runs queries', async () => {
    const r = await getGraphQL(url(), { query: TODOS_QUERY }, anon());
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual(await engineAnswer(TODOS_QUERY));
  });

  it('GET is answered as yoga answers it, with or without the direct path (an Origin sends it through yoga)', async () => {
    const variants: Record<string, string>[] = [
      { query: TODOS_QUERY },
      {
        query: 'query Q($id: Int) { todoCollection(filter: {id: {eq: $id}}) { edges { node { title } } } }',
        variables: '{"id":2}',
        operationName: 'Q',
      },
      { query: 'query A { __typename } query B { __typename }' },
      { query: 'query A { __typename }', operationName: 'Z' },
      { query: 'mutation { __typename }' },
      { query: '{ todoCollection ' },
      { query: '{ nope }' },
      { query: '' },
      { query: '{ __typename }', variables: 'null', extensions: '{}' },
      { query: '{ __typename }', variables: '[1]' },
      { query: `{ __typename }${'\u0000'}` },
    ];
    for (const v of variants) {
      const target = `${url()}?${new URLSearchParams(v)}`;
      const direct = await http(target, { headers: anon() });
      const viaYoga = await http(target, { headers: { ...anon(), origin: 'http://example.test' } });
      expect({ status: direct.status, allow: direct.headers.get('allow'), body: direct.text }).toEqual({
        status: viaYoga.status,
        allow: viaYoga.headers.get('allow'),
        body: viaYoga.text,
      });
    }
  });

  it('GET with variables or extensions that are not JSON is 400 BAD_REQUEST, not 500', async () => {
    const bads: Record<string, string>[] = [{ variables: '{' }, { extensions: 'nope' }];
    for (const bad of bads) {
      for (const headers of [anon(), { ...anon(), origin: 'http://example.test' }]) {
        const r = await http(`${url()}?${new URLSearchParams({ query: '{ __typename }', ...bad })}`, {
          headers,
        });
        expect(r.status).toBe(400);
        expect(r.json).toEqual({
          errors: [
            {
              message: 'The "variables" and "extensions" query string parameters must be JSON.',
              extensions: { code: 'BAD_REQUEST' },
            },
          ],
        });
      }
    }
  });

  it('GET refuses mutations (405), POST runs them', async () => {
    const m = 'mutation { insertIntotodoCollection(objects: [{title: "via GET"}]) { affectedCount } }';
    const viaGet = await getGraphQL(url(), { query: m }, anon());
    expect(viaGet.status).toBe(405);
    expect(viaGet.json.errors[0].message).toMatch(/mutation operation from a POST request/);
    const viaPost = await postGraphQL(url(), { query: m.replace('via GET', `via POST ${form}`) }, anon());
    expect(viaPost.status).toBe(200);
    expect(viaPost.json).toEqual({ data: { insertIntotodoCollection: { affectedCount: 1 } } });
  });

  it('GraphiQL for browsers (GET, Accept: text/html), without a key', async () => {
    const r = await http(url(), { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/text\/html/);
    expect(r.text).toMatch(/graphiql/i);
    expect(r.text).not.toContain(t.anonKey);
  });

  it('the trailing-slash path is 404', async () => {
    const r = await postGraphQL(url() + '/', { query: '{ __typename }' }, anon());
    expect(r.status).toBe(404);
    const g = await http(url() + '/', { headers: { accept: 'text/html' } });
    expect(g.status).toBe(404);
  });

  it('a body over the limit is 413 with a JSON error (Content-Length)', async () => {
    const big = { query: `{ __typename } # ${'x'.repeat(MAX_BODY)}` };
    const r = await postGraphQL(url(), big, anon());
    expect(r.status).toBe(413);
    expect(r.json.errors[0].message).toMatch(/too large/i);
  });

  it('a body over the limit is 413 with a JSON error (chunked, no Content-Length)', async () => {
    const chunk = new TextEncoder().encode(
      JSON.stringify({ query: `{ __typename } # ${'x'.repeat(MAX_BODY)}` }),
    );
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(chunk);
        c.close();
      },
    });
    const r = await http(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...anon() },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(r.status).toBe(413);
    expect(r.json.errors[0].message).toMatch(/too large/i);
  });

  it('a document deeper than the limit is a GraphQL error with a clear message', async () => {
    const r = await postGraphQL(url(), { query: '{ todoCollection { edges { node { id } } } }' }, anon());
    expect(r.status).toBe(200);
    expect(r.json.errors).toBeUndefined();
    const deep = await postGraphQL(
      url(),
      { query: '{ todoCollection { edges { node { x { y } } } } }' },
      anon(),
    );
    expect(deep.status).toBe(200);
    expect(deep.json).toEqual({
      errors: [{ message: `Query depth 5 exceeds the maximum allowed depth of ${MAX_DEPTH}` }],
    });
    // Fragments count where they are spread.
    const viaFragment = await postGraphQL(
      url(),
      { query: '{ todoCollection { ...F } } fragment F on todoConnection { edges { node { x { y } } } }' },
      anon(),
    );
    expect(viaFragment.json.errors[0].message).toMatch(/Query depth 5 exceeds/);
  });

  it('answers CORS preflight without a key', async () => {
    const r = await http(url(), {
      method: 'OPTIONS',
      headers: {
        origin: 'http://example.test',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'apikey, content-type',
      },
    });
    expect(r.status).toBeLessThan(300);
    expect(r.headers.get('access-control-allow-origin')).toBeTruthy();
    expect((r.headers.get('access-control-allow-headers') ?? '').toLowerCase()).toContain('apikey');
  });

  it('the same answer whichever path serves the request (direct POST, or yoga for browsers and other media types)', async () => {
    const expected = await engineAnswer(TODOS_QUERY);
    const direct = await postGraphQL(url(), { query: TODOS_QUERY }, anon());
    const withOrigin = await postGraphQL(
      url(),
      { query: TODOS_QUERY },
      { ...anon(), origin: 'http://app.example' },
    );
    const graphqlResponse = await postGraphQL(
      url(),
      { query: TODOS_QUERY },
      { ...anon(), accept: 'application/graphql-response+json' },
    );
    for (const r of [direct, withOrigin, graphqlResponse]) {
      expect(r.status).toBe(200);
      expect(JSON.parse(r.text)).toEqual(expected);
    }
    expect(withOrigin.headers.get('access-control-allow-origin')).toBe('http://app.example');
    expect(graphqlResponse.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
  });

  it('other POST media types go through yoga: application/graphql and form-encoded', async () => {
    const expected = await engineAnswer(TODOS_QUERY);
    const asGraphQL = await http(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/graphql', ...anon() },
      body: TODOS_QUERY,
    });
    expect(JSON.parse(asGraphQL.text)).toEqual(expected);
    const asForm = await http(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...anon() },
      body: new URLSearchParams({ query: TODOS_QUERY }).toString(),
    });
    expect(JSON.parse(asForm.text)).toEqual(expected);
  });

  it('malformed requests get JSON errors', async () => {
    const badJson = await postGraphQL(url(), '{"query": ', anon());
    if (form === 'express+json') {
      // express.json() answered before the handler ran.
      expect(badJson.status).toBe(400);
    } else {
      expect(badJson.status).toBe(400);
      expect(badJson.json.errors[0].message).toMatch(/invalid JSON/i);
    }
    const noQuery = await postGraphQL(url(), { variables: {} }, anon());
    expect(noQuery.json.errors[0].message).toBe('Must provide query string.');
    const badVariables = await postGraphQL(url(), { query: '{ __typename }', variables: [1] }, anon());
    expect(badVariables.json.errors[0].message).toMatch(/variables/);
    const batch = await postGraphQL(url(), [{ query: '{ __typename }' }], anon());
    expect(batch.status).toBeGreaterThanOrEqual(400);
  });

  it('401 without a key in this form too', async () => {
    const r = await postGraphQL(url(), { query: '{ __typename }' });
    expect(r.status).toBe(401);
    expect(r.json.message).toBe('No API key found in request');
  });
});

describe('mounting', () => {
  it('Express: other routes keep working; paths that are not the endpoint fall through', async () => {
    const root = bases.express!.replace(/\/api$/, '');
    expect((await http(root + '/other')).json).toEqual({ other: true });
    expect((await http(root + '/api/graphql/v2')).status).toBe(404);
  });

  it('getPool and getTarget: the database (or project) chosen per request; no target is 404', async () => {
    let calls = 0;
    const byPool = await listen(
      createGraphQLHandler({
        getPool: () => {
          calls++;
          return t.pool;
        },
        jwtSecret: t.jwtSecret,
        anonKey: t.anonKey,
      }),
    );
    const byTarget = await listen(
      createGraphQLHandler({
        getTarget: (req) =>
          req.headers['x-tenant'] === 'known'
            ? { pool: t.pool, jwtSecret: t.jwtSecret, anonKey: t.anonKey }
            : undefined,
      }),
    );
    try {
      const r = await postGraphQL(byPool.url + '/graphql/v1', { query: TODOS_QUERY }, { apikey: t.anonKey });
      expect(JSON.parse(r.text)).toEqual(await engineAnswer(TODOS_QUERY));
      expect(calls).toBe(1);
      const known = await postGraphQL(
        byTarget.url + '/graphql/v1',
        { query: TODOS_QUERY },
        { apikey: t.anonKey, 'x-tenant': 'known' },
      );
      expect(JSON.parse(known.text)).toEqual(await engineAnswer(TODOS_QUERY));
      const unknown = await postGraphQL(
        byTarget.url + '/graphql/v1',
        { query: TODOS_QUERY },
        { apikey: t.anonKey, 'x-tenant': 'nope' },
      );
      expect(unknown.status).toBe(404);
      expect(unknown.json.message).toBe('Project not found');
    } finally {
      await byPool.close();
      await byTarget.close();
    }
  });

  it('refuses a configuration without a database or secret, and a relative basePath', () => {
    expect(() => createGraphQLHandler({ jwtSecret: 'x' })).toThrow(/pool, getPool or getTarget/);
    expect(() => createGraphQLHandler({ pool: t.pool })).toThrow(/jwtSecret/);
    expect(() => createGraphQLHandler({ pool: t.pool, jwtSecret: 'x', basePath: 'api' })).toThrow(/basePath/);
  });

  it('Node http: any other path is a 404 JSON error', async () => {
    const r = await http(bases.node + '/graphql');
    expect(r.status).toBe(404);
    expect(r.json.message).toBe('Not found');
  });
});
