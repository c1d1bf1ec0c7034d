/**
 * Route schemas of the Storage API: Fastify's Ajv words the 400s (`<part>/<path> <message>`), and
 * validation runs before authentication, as in the reference (its JWT check is a preHandler).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStorage, bucketName, type StorageHarness } from '../support/storage.js';

let h: StorageHarness;
let b: string;
let svc: string;

beforeAll(async () => {
  h = await startStorage('file');
  svc = h.project.serviceRoleKey;
  b = bucketName('sch');
  await h.service.createBucket(b, { public: false });
  await h.service.from(b).upload('a.txt', 'x', { contentType: 'text/plain' });
});
afterAll(async () => h?.close());

const json = (method: string, body: unknown) => ({
  method,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

async function expectInvalid(res: Response, message: string) {
  expect(res.status).toBe(400);
  expect(await res.json()).toEqual({ statusCode: '400', error: 'Error', message, code: 'InvalidRequest' });
}

describe('storage route schemas', () => {
  it('bucket bodies and query strings', async () => {
    await expectInvalid(
      await h.api('/bucket', { token: svc, ...json('POST', { name: b, public: 'maybe' }) }),
      'body/public must be boolean',
    );
    await expectInvalid(
      await h.api('/bucket', { token: svc, ...json('POST', { name: b, allowed_mime_types: { a: 1 } }) }),
      'body/allowed_mime_types must be array',
    );
    await expectInvalid(
      await h.api(`/bucket/${b}`, { token: svc, ...json('PUT', {}) }),
      "body must have required property 'public'",
    );
    await expectInvalid(await h.api('/bucket?limit=x', { token: svc }), 'querystring/limit must be integer');
    await expectInvalid(await h.api('/bucket?offset=-1', { token: svc }), 'querystring/offset must be >= 0');
    await expectInvalid(
      await h.api('/bucket?sortColumn=owner', { token: svc }),
      'querystring/sortColumn must be equal to one of the allowed values',
    );
    await expectInvalid(
      await h.api('/bucket?sortOrder=up', { token: svc }),
      'querystring/sortOrder must be equal to one of the allowed values',
    );
  });

  it('object bodies', async () => {
    await expectInvalid(
      await h.api(`/object/${b}`, { token: svc, ...json('DELETE', {}) }),
      "body must have required property 'prefixes'",
    );
    await expectInvalid(
      await h.api(`/object/${b}`, { token: svc, ...json('DELETE', { prefixes: [] }) }),
      'body/prefixes must NOT have fewer than 1 items',
    );
    await expectInvalid(
      await h.api('/object/move', { token: svc, ...json('POST', { bucketId: b, sourceKey: 'a.txt' }) }),
      "body must have required property 'destinationKey'",
    );
    await expectInvalid(
      await h.api(`/object/list/${b}`, { token: svc, ...json('POST', {}) }),
      "body must have required property 'prefix'",
    );
    await expectInvalid(
      await h.api(`/object/list/${b}`, { token: svc, ...json('POST', { prefix: '', limit: 0 }) }),
      'body/limit must be >= 1',
    );
    await expectInvalid(
      await h.api(`/object/list/${b}`, {
        token: svc,
        ...json('POST', { prefix: '', sortBy: { column: 'size' } }),
      }),
      'body/sortBy/column must be equal to one of the allowed values',
    );
    await expectInvalid(
      await h.api(`/object/list/${b}`, {
        token: svc,
        ...json('POST', { prefix: '', sortBy: { order: 'up' } }),
      }),
      'body/sortBy/order must be equal to one of the allowed values',
    );
    const upper = await h.api(`/object/list/${b}`, {
      token: svc,
      ...json('POST', { prefix: '', sortBy: { column: 'name', order: 'DESC' } }),
    });
    expect(upper.status).toBe(200);
    await expectInvalid(
      await h.api(`/object/list-v2/${b}`, { token: svc, ...json('POST', { limit: 1001 }) }),
      'body/limit must be an integer between 1 and 1000',
    );
  });

  it('signing bodies', async () => {
    await expectInvalid(
      await h.api(`/object/sign/${b}/a.txt`, { token: svc, ...json('POST', { expiresIn: 0 }) }),
      'body/expiresIn must be >= 1',
    );
    await expectInvalid(
      await h.api(`/object/sign/${b}/a.txt`, {
        token: svc,
        ...json('POST', { expiresIn: 60, transform: 'x' }),
      }),
      'body/transform must be object',
    );
    await expectInvalid(
      await h.api(`/object/sign/${b}`, { token: svc, ...json('POST', { expiresIn: 60 }) }),
      "body must have required property 'paths'",
    );
    await expectInvalid(
      await h.api(`/object/sign/${b}`, {
        token: svc,
        ...json('POST', { expiresIn: 60, paths: Array.from({ length: 1001 }, (_, i) => `${i}`) }),
      }),
      'body/paths must NOT have more than 1000 items',
    );
    // A numeric string is coerced, as Fastify's default Ajv (and so the reference) does.
    const coerced = await h.api(`/object/sign/${b}/a.txt`, {
      token: svc,
      ...json('POST', { expiresIn: '60' }),
    });
    expect(coerced.status).toBe(200);
  });

  it('signed URL tokens: absent is a schema error, empty is a token error', async () => {
    await expectInvalid(
      await h.api(`/object/sign/${b}/a.txt`),
      "querystring must have required property 'token'",
    );
    const empty = await h.api(`/object/sign/${b}/a.txt?token=`);
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ statusCode: '400', code: 'InvalidJWT' });
  });

  it('validation answers before authentication', async () => {
    await expectInvalid(
      await h.api('/bucket', { token: 'garbage', ...json('POST', {}) }),
      "body must have required property 'name'",
    );
    await expectInvalid(await h.api('/bucket', json('POST', {})), "body must have required property 'name'");
  });
});
