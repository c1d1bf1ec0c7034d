import { describe, expect, it } from 'vitest';
import { ConsoleLoginTokens, LOGIN_TOKEN_TTL_MS } from '../../src/console/login-tokens.js';

const PAT = `sbp_${'a'.repeat(40)}`;

describe('console one-time login tokens', () => {
  it('trade once for the access token, and are not the access token', () => {
    const tokens = new ConsoleLoginTokens();
    const t = tokens.issue(PAT);
    expect(t).not.toContain(PAT);
    expect(t).toMatch(/^[\w-]{43}$/);
    expect(tokens.redeem(t)).toBe(PAT);
    expect(tokens.redeem(t)).toBeUndefined();
  });

  it('expire, and unknown or malformed tokens trade for nothing', () => {
    let now = 1_000;
    const tokens = new ConsoleLoginTokens(() => now);
    const t = tokens.issue(PAT);
    expect(tokens.redeem('nope')).toBeUndefined();
    expect(tokens.redeem('')).toBeUndefined();
    expect(tokens.redeem(`${t}x`)).toBeUndefined();
    now += LOGIN_TOKEN_TTL_MS;
    expect(tokens.redeem(t)).toBeUndefined();
  });
});
