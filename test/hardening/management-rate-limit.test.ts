/**
 * Rate limits: a 429 says when to come back (`Retry-After`), and a flood of requests without a
 * valid token from one address does not use up the budget of a valid token behind that address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api, createOtherUser } from '../support/management.js';

const WINDOW_MS = 30_000;
let tp: TestPlatform;

beforeAll(async () => {
  tp = await startTestPlatform({ rateLimitMax: 5, rateLimitWindowMs: WINDOW_MS });
}, 120_000);
afterAll(async () => {
  await tp?.close();
});

describe('Management API rate limits', () => {
  it('429 carries Retry-After (whole seconds, within the window) next to the X-RateLimit-* headers', async () => {
    const path = `/v1/projects/${tp.platform.defaultRef}/secrets`;
    let last = await api(tp, 'GET', path);
    for (let i = 0; i < 6 && last.status !== 429; i++) last = await api(tp, 'GET', path);
    expect(last.status).toBe(429);
    expect(last.body).toEqual({ message: 'Too many requests' });
    const retry = Number(last.headers.get('retry-after'));
    expect(Number.isInteger(retry)).toBe(true);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect(last.headers.get('x-ratelimit-reset')).not.toBeNull();
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('an anonymous flood from one address is limited, the valid tokens behind it are not', async () => {
    const path = `/v1/projects/${tp.platform.defaultRef}`;
    const bad = [null, 'garbage', `sbp_${'f'.repeat(40)}`, 'sbp_short'];
    const flood = await Promise.all(
      Array.from({ length: 40 }, (_, i) => api(tp, 'GET', path, { token: bad[i % bad.length] })),
    );
    const statuses = flood.map((r) => r.status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    const limited = flood.find((r) => r.status === 429);
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // Same address (127.0.0.1), valid tokens: their own budgets.
    const owner = await api(tp, 'GET', path);
    expect(owner.status).toBe(200);
    expect(owner.headers.get('x-ratelimit-remaining')).toBe('4');
    const other = await createOtherUser(tp, 'rl-hardening');
    const r = await api(tp, 'GET', '/v1/organizations', { token: other.token });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-remaining')).toBe('4');
    // And the anonymous budget is still spent.
    expect((await api(tp, 'GET', path, { token: null })).status).toBe(429);
  });

  it('each valid token has its own budget, even two tokens of one user', async () => {
    const { createHash, randomBytes } = await import('node:crypto');
    const user = await createOtherUser(tp, 'rl-two-tokens');
    const second = `sbp_${randomBytes(20).toString('hex')}`;
    await tp.platform.pool.query(
      `insert into access_tokens (user_id, name, token_sha256) values ($1, 'second', $2)`,
      [user.userId, createHash('sha256').update(second).digest('hex')],
    );
    let last = await api(tp, 'GET', '/v1/organizations', { token: user.token });
    for (let i = 0; i < 6 && last.status !== 429; i++)
      last = await api(tp, 'GET', '/v1/organizations', { token: user.token });
    expect(last.status).toBe(429);
    const other = await api(tp, 'GET', '/v1/organizations', { token: second });
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('4');
  });
});
