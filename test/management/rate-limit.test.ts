/** Rate limits per (user, scope, endpoint), with the X-RateLimit-* headers and 429. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api, createOtherUser } from '../support/management.js';

let tp: TestPlatform;
beforeAll(async () => {
  tp = await startTestPlatform({ rateLimitMax: 3, rateLimitWindowMs: 4_000 });
});
afterAll(async () => {
  await tp?.close();
});

describe('rate limiting', () => {
  it('sets X-RateLimit-Limit/Remaining/Reset and answers 429 past the limit, then recovers', async () => {
    const ref = tp.platform.defaultRef;
    const seen: Array<[number, string | null, string | null]> = [];
    for (let i = 0; i < 4; i++) {
      const r = await api(tp, 'GET', `/v1/projects/${ref}`);
      seen.push([r.status, r.headers.get('x-ratelimit-limit'), r.headers.get('x-ratelimit-remaining')]);
      const reset = Number(r.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThanOrEqual(0);
      expect(reset).toBeLessThanOrEqual(4);
      if (i === 3) expect(r.body).toEqual({ message: 'Too many requests' });
    }
    expect(seen).toEqual([
      [200, '3', '2'],
      [200, '3', '1'],
      [200, '3', '0'],
      [429, '3', '0'],
    ]);
    await new Promise((r) => setTimeout(r, 4_100));
    const after = await api(tp, 'GET', `/v1/projects/${ref}`);
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('counts each endpoint, scope and user separately', async () => {
    const ref = tp.platform.defaultRef;
    for (let i = 0; i < 3; i++)
      expect((await api(tp, 'GET', `/v1/projects/${ref}/api-keys`)).status).toBe(200);
    expect((await api(tp, 'GET', `/v1/projects/${ref}/api-keys`)).status).toBe(429);
    // another endpoint of the same project
    expect((await api(tp, 'GET', `/v1/projects/${ref}/secrets`)).status).toBe(200);
    // another user on the same endpoint (gets 403, but has its own budget)
    const other = await createOtherUser(tp, 'rl');
    const r = await api(tp, 'GET', `/v1/projects/${ref}/api-keys`, { token: other.token });
    expect(r.status).toBe(403);
    expect(r.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('POST /v1/projects is counted per organization named in the body', async () => {
    const org = (await api(tp, 'POST', '/v1/organizations', { body: { name: 'second' } })).body.slug;
    // invalid bodies (no db_pass): refused with 400 after being counted, nothing is created
    const bad = (slug: string) =>
      api(tp, 'POST', '/v1/projects', { body: { name: 'x', organization_slug: slug } });
    expect(
      (await Promise.all([bad('default-org'), bad('default-org'), bad('default-org')])).map((r) => r.status),
    ).toEqual([400, 400, 400]);
    expect((await bad('default-org')).status).toBe(429);
    const other = await bad(org);
    expect(other.status).toBe(400);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  // Issue #12 asks for a budget per token (the hosted platform counts per user).
  it('each token of one user has its own budget', async () => {
    const { randomBytes, createHash } = await import('node:crypto');
    const second = 'sbp_' + randomBytes(20).toString('hex');
    await tp.platform.pool.query(
      `insert into access_tokens (user_id, name, token_sha256) select user_id, 'second', $1 from access_tokens where token_sha256 = $2`,
      [
        createHash('sha256').update(second).digest('hex'),
        createHash('sha256').update(tp.platform.defaultAccessToken).digest('hex'),
      ],
    );
    for (let i = 0; i < 3; i++) expect((await api(tp, 'GET', '/v1/organizations')).status).toBe(200);
    expect((await api(tp, 'GET', '/v1/organizations')).status).toBe(429);
    expect((await api(tp, 'GET', '/v1/organizations', { token: second })).status).toBe(200);
  });

  it('unauthenticated calls are limited by client address', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 4; i++)
      codes.push((await api(tp, 'GET', '/v1/projects', { token: 'sbp_' + 'f'.repeat(40) })).status);
    expect(codes).toEqual([401, 401, 401, 429]);
  });
});
