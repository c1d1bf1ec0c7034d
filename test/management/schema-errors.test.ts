/**
 * Route schemas of the management scope answer like the reference API: one 400 `{"message"}`
 * naming the first problem in the order the reference API checks (unknown keys, then fields in
 * schema order, then for one field presence, type, length, pattern, allowed values).
 * A bare Fastify app with the scope's validator and error handler; no database needed.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../../src/management/http/errors.js';
import {
  Optional,
  Strict,
  StringEnum,
  conditional,
  oneMessage,
  registerSchemaValidation,
} from '../../src/management/http/schemas.js';

const Body = Strict({
  query: Type.String({ minLength: 1 }),
  name: Optional(Type.String({ maxLength: 3 })),
  plan: Optional(StringEnum(['free', 'pro'])),
  flag: Optional(Type.Boolean()),
  nested: Optional(Strict({ code: StringEnum(['a', 'b']) })),
  items: Optional(Type.Array(Type.Object({ v: Type.Integer() }))),
});

let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify();
  registerErrorHandling(app);
  registerSchemaValidation(app);
  app.post('/x', { schema: { body: Body } }, async (req) => req.body);
  app.post('/list', { schema: { body: Type.Array(Type.String()) } }, async (req) => req.body);
  const Host = Type.String({ minLength: 1, messages: oneMessage('h must be a host name', ['minLength']) });
  app.post('/msg', { schema: { body: Type.Object({ h: Host }) } }, async (req) => req.body);
  const IfObject = Type.Unsafe(conditional({ type: 'object' }, Strict({ on: Optional(Type.Boolean()) })));
  app.post('/if', { schema: { body: Strict({ c: Type.Optional(IfObject) }) } }, async (req) => req.body);
  const Limit = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1 })) });
  app.get('/q', { schema: { querystring: Limit } }, async (req) => req.query);
  await app.ready();
});

afterAll(async () => {
  await app.close();
});

async function post(url: string, body: unknown) {
  const r = await app.inject({
    method: 'POST',
    url,
    payload: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  return { status: r.statusCode, body: r.json() as unknown };
}

describe('management schema errors', () => {
  it.each([
    [['x'], 'Request body must be a JSON object'],
    [null, 'Request body must be a JSON object'],
    [{ zz: 1 }, 'property zz should not exist'],
    [{ name: 'abcd', zz: 1 }, 'property zz should not exist'],
    [{ name: 'abcd' }, 'query is required'],
    [{ query: null }, 'query is required'],
    [{ query: 1 }, 'query must be a string'],
    [{ query: '' }, 'query should not be empty'],
    [{ query: 'q', name: 'abcd', plan: 'x' }, 'name must be shorter than or equal to 3 characters'],
    [{ query: 'q', plan: 'x' }, 'plan must be one of the following values: free, pro'],
    [{ query: 'q', plan: 3 }, 'plan must be a string'],
    [{ query: 'q', flag: 'yes' }, 'flag must be a boolean value'],
    [{ query: 'q', nested: 1 }, 'nested must be an object'],
    [{ query: 'q', nested: { code: 'c', y: 1 } }, 'nested.property y should not exist'],
    [{ query: 'q', nested: { code: 'c' } }, 'code must be one of the following values: a, b'],
    [{ query: 'q', items: [{ v: 1 }, { v: 'x' }] }, '1.v must be an integer number'],
  ])('%j → 400 %s', async (body, message) => {
    const r = await post('/x', body);
    expect(r).toEqual({ status: 400, body: { message } });
  });

  it('accepts null for optional fields, keeps types as sent (no coercion) and keeps all keys', async () => {
    const body = { query: 'q', name: null, plan: null, flag: false, items: [{ v: 2 }] };
    expect(await post('/x', body)).toEqual({ status: 200, body });
  });

  it('labels array items by index', async () => {
    expect(await post('/list', ['a', 2])).toEqual({ status: 400, body: { message: '1 must be a string' } });
    expect(await post('/list', { a: 1 })).toEqual({
      status: 400,
      body: { message: 'Request body must be a JSON array' },
    });
  });

  it.each([
    [{}, 'h must be a host name'],
    [{ h: null }, 'h must be a host name'],
    [{ h: 3 }, 'h must be a host name'],
    [{ h: '' }, 'h must be a host name'],
  ])('a field with one message: %j', async (body, message) => {
    expect(await post('/msg', body)).toEqual({ status: 400, body: { message } });
  });

  it('checks a conditional part only where its condition holds', async () => {
    expect(await post('/if', { c: 'text' })).toEqual({ status: 200, body: { c: 'text' } });
    expect(await post('/if', { c: { on: 1 } })).toEqual({
      status: 400,
      body: { message: 'on must be a boolean value' },
    });
    expect(await post('/if', { c: { x: 1 } })).toEqual({
      status: 400,
      body: { message: 'c.property x should not exist' },
    });
  });

  it('reads numbers from the query string', async () => {
    const ok = await app.inject({ method: 'GET', url: '/q?limit=3' });
    expect(ok.json()).toEqual({ limit: 3 });
    const bad = await app.inject({ method: 'GET', url: '/q?limit=abc' });
    expect(bad.json()).toEqual({ message: 'limit must be an integer number' });
  });
});
