import { describe, expect, it } from 'vitest';
import { SignJWT, UnsecuredJWT, decodeJwt } from 'jose';
import { mintApiKey, newJwtSecret, signJwt, verifyJwt, JwtError } from '../../src/auth/jwt.js';
import { checkApiKey, principalOf, AuthError } from '../../src/auth/principal.js';

const secret = newJwtSecret();

async function rejects(p: Promise<unknown>, reason: string) {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(JwtError);
  expect((err as JwtError).reason).toBe(reason);
}

describe('API keys and JWTs', () => {
  it('mints anon and service_role keys as HS256 JWTs with a role claim', async () => {
    const anon = await mintApiKey(secret, 'anon', 'abcdefghijabcdefghij');
    const header = JSON.parse(Buffer.from(anon.split('.')[0]!, 'base64url').toString());
    expect(header.alg).toBe('HS256');
    expect(decodeJwt(anon)).toMatchObject({ role: 'anon', iss: 'supabase', ref: 'abcdefghijabcdefghij' });
    expect((await verifyJwt(secret, anon)).role).toBe('anon');
    const service = await mintApiKey(secret, 'service_role', 'abcdefghijabcdefghij');
    expect((await verifyJwt(secret, service)).role).toBe('service_role');
  });

  it('rejects an expired token', async () => {
    const t = await signJwt(secret, { role: 'authenticated', exp: Math.floor(Date.now() / 1000) - 10 });
    await rejects(verifyJwt(secret, t), 'expired');
  });

  it('rejects a wrong signature', async () => {
    const t = await signJwt(newJwtSecret(), { role: 'authenticated' });
    await rejects(verifyJwt(secret, t), 'invalid_signature');
    const good = await signJwt(secret, { role: 'anon' });
    const [h, , s] = good.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ role: 'service_role' })).toString('base64url');
    await rejects(verifyJwt(secret, `${h}.${forgedPayload}.${s}`), 'invalid_signature');
  });

  it('rejects alg: none', async () => {
    const t = new UnsecuredJWT({ role: 'service_role' }).encode();
    const err = await verifyJwt(secret, t).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(JwtError);
  });

  it('rejects other algorithms even with the right key material', async () => {
    const t = await new SignJWT({ role: 'service_role' })
      .setProtectedHeader({ alg: 'HS512' })
      .sign(new TextEncoder().encode(secret));
    const err = await verifyJwt(secret, t).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(JwtError);
  });

  it('rejects a role claim that is not an API role', async () => {
    for (const role of ['postgres', 'authenticator', 'pg_read_server_files', '', 42]) {
      const t = await signJwt(secret, { role: role as string });
      await rejects(verifyJwt(secret, t), 'bad_role');
    }
  });

  it('a verified token stops being accepted when it expires (the verification cache honours exp)', async () => {
    const exp = Math.floor(Date.now() / 1000) + 2;
    const t = await signJwt(secret, { role: 'authenticated', exp });
    expect((await verifyJwt(secret, t)).role).toBe('authenticated');
    expect((await verifyJwt(secret, t)).role).toBe('authenticated');
    await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 50));
    await rejects(verifyJwt(secret, t), 'expired');
  });

  it('a cached verification is bound to its secret', async () => {
    const t = await signJwt(secret, { role: 'authenticated' });
    await verifyJwt(secret, t);
    await rejects(verifyJwt(newJwtSecret(), t), 'invalid_signature');
  });

  it('rejects garbage', async () => {
    await rejects(verifyJwt(secret, 'not.a.jwt'), 'malformed');
    await rejects(verifyJwt(secret, ''), 'malformed');
  });

  it('a token without a role acts as anon', async () => {
    expect((await verifyJwt(secret, await signJwt(secret, { sub: 'x' }))).role).toBe('anon');
  });
});

describe('request principal', () => {
  const keysP = (async () => ({
    jwtSecret: secret,
    anonKey: await mintApiKey(secret, 'anon', 'abcdefghijabcdefghij'),
    serviceRoleKey: await mintApiKey(secret, 'service_role', 'abcdefghijabcdefghij'),
  }))();

  it('needs an apikey', async () => {
    const keys = await keysP;
    await expect(checkApiKey(keys, undefined)).rejects.toBeInstanceOf(AuthError);
    await expect(checkApiKey(keys, 'nope')).rejects.toBeInstanceOf(AuthError);
    await expect(
      checkApiKey(keys, await mintApiKey(newJwtSecret(), 'anon', 'abcdefghijabcdefghij')),
    ).rejects.toBeInstanceOf(AuthError);
  });

  it('the bearer token decides the role; its claims travel along', async () => {
    const keys = await keysP;
    expect((await principalOf(keys, keys.anonKey, undefined)).role).toBe('anon');
    expect((await principalOf(keys, keys.serviceRoleKey, undefined)).role).toBe('service_role');
    const user = await signJwt(
      secret,
      { role: 'authenticated', sub: 'u1', email: 'a@b.c' },
      { expiresInSeconds: 60 },
    );
    const p = await principalOf(keys, keys.anonKey, user);
    expect(p.role).toBe('authenticated');
    expect(p.claims).toMatchObject({ sub: 'u1', email: 'a@b.c' });
    const expired = await signJwt(secret, { role: 'authenticated', exp: 1 });
    await expect(principalOf(keys, keys.anonKey, expired)).rejects.toBeInstanceOf(AuthError);
  });
});
