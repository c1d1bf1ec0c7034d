/** The shared management infrastructure: tokens, access checks, errors and rate limits. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api, createOtherUser } from '../support/management.js';

let tp: TestPlatform;
beforeAll(async () => {
  tp = await startTestPlatform({ rateLimitMax: 1000 });
});
afterAll(async () => {
  await tp?.close();
});

describe('personal access tokens', () => {
  it('the default token has the CLI shape and is stored only as a digest', async () => {
    expect(tp.platform.defaultAccessToken).toMatch(/^sbp_[a-f0-9]{40}$/);
    const { rows } = await tp.platform.pool.query('select token_sha256 from access_tokens');
    for (const r of rows) expect(r.token_sha256).not.toContain(tp.platform.defaultAccessToken);
    const { createHash } = await import('node:crypto');
    expect(rows.map((r) => r.token_sha256)).toContain(
      createHash('sha256').update(tp.platform.defaultAccessToken).digest('hex'),
    );
  });

  it.each([
    ['no header', null],
    ['a malformed token', 'not-a-token'],
    ['an unknown well-formed token', 'sbp_' + '0'.repeat(40)],
    ['the default token uppercased', 'UPPERCASE'],
  ])('401 {"message":"Unauthorized"} with %s', async (_label, token) => {
    const sent = token === 'UPPERCASE' ? tp.platform.defaultAccessToken.toUpperCase() : token;
    const r = await api(tp, 'GET', '/v1/projects', { token: sent });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ message: 'Unauthorized' });
    expect(r.headers.get('content-type')).toContain('application/json');
  });

  it('a non-bearer scheme is refused', async () => {
    const r = await api(tp, 'GET', '/v1/projects', {
      token: null,
      headers: { authorization: `Basic ${tp.platform.defaultAccessToken}` },
    });
    expect(r.status).toBe(401);
  });

  it('answers x-gotrue-id with the caller user id', async () => {
    const r = await api(tp, 'GET', '/v1/organizations');
    expect(r.status).toBe(200);
    expect(r.headers.get('x-gotrue-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('unknown /v1 routes are 404 with a message (after authentication)', async () => {
    expect((await api(tp, 'GET', '/v1/nope', { token: null })).status).toBe(401);
    const r = await api(tp, 'GET', '/v1/nope');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: expect.any(String) });
  });
});

describe('project access', () => {
  it('a malformed ref is 400', async () => {
    for (const ref of ['abc', 'ABCDEFGHIJKLMNOPQRST', 'abcdefghijklmnopqrs1', 'abcdefghijklmnopqrstu']) {
      const r = await api(tp, 'GET', `/v1/projects/${ref}`);
      expect(r.status, ref).toBe(400);
      expect(r.body.message).toMatch(/ref/);
    }
  });

  it('an unknown ref is 404 "Project not found"', async () => {
    const r = await api(tp, 'GET', '/v1/projects/aaaaaaaaaaaaaaaaaaaa');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: 'Project not found' });
  });

  it('a project of another user is 403 "Forbidden resource" on every project route', async () => {
    const other = await createOtherUser(tp, 'mallory');
    const ref = tp.platform.defaultRef;
    for (const [method, path] of [
      ['GET', `/v1/projects/${ref}`],
      ['GET', `/v1/projects/${ref}/api-keys`],
      ['GET', `/v1/projects/${ref}/secrets`],
      ['DELETE', `/v1/projects/${ref}`],
      ['GET', `/v1/projects/${ref}/types/typescript`],
    ] as const) {
      const r = await api(tp, method, path, { token: other.token });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body).toEqual({ message: 'Forbidden resource' });
    }
    // and the owner still gets in
    expect((await api(tp, 'GET', `/v1/projects/${ref}`)).status).toBe(200);
  });

  it('an organization of another user is 403, an unknown one 404', async () => {
    const other = await createOtherUser(tp, 'eve');
    const theirs = await api(tp, 'POST', '/v1/projects', {
      body: { name: 'x', db_pass: 'pw', organization_slug: other.orgSlug },
    });
    expect(theirs.status).toBe(403);
    expect(theirs.body).toEqual({ message: 'Forbidden resource' });
    const unknown = await api(tp, 'POST', '/v1/projects', {
      body: { name: 'x', db_pass: 'pw', organization_slug: 'no-such-org' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'Organization not found' });
  });
});

describe('error bodies', () => {
  it('malformed JSON is 400 with a message', async () => {
    const r = await api(tp, 'POST', '/v1/organizations', {
      rawBody: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'Request body is not valid JSON' });
  });

  it('refuses __proto__ keys in JSON bodies', async () => {
    const r = await api(tp, 'POST', '/v1/organizations', {
      rawBody: '{"name":"x","__proto__":{"polluted":true}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'Request body contains a forbidden property name' });
  });

  it('an unexpected failure is 500 with the operation message and an errorEventId', async () => {
    // Break the platform database under the organizations listing for one request.
    await tp.platform.pool.query('alter table organization_members rename to organization_members_x');
    try {
      const r = await api(tp, 'GET', '/v1/organizations');
      expect(r.status).toBe(500);
      expect(r.body).toEqual({
        message: 'Unexpected error listing organizations',
        errorEventId: expect.stringMatching(/^[0-9a-f]{32}$/),
      });
    } finally {
      await tp.platform.pool.query('alter table organization_members_x rename to organization_members');
    }
  });
});
