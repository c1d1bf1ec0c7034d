/** A JWT of the project for a signed-in user (role `authenticated`), as the project's auth would issue. */
import { signJwt } from '../../auth/jwt.js';
import type { ProjectContext } from '../../platform/project-context.js';

export async function signUserToken(
  ctx: ProjectContext,
  sub: string,
  ttlSeconds: number,
): Promise<{ token: string; exp: number }> {
  const exp = Math.floor(Date.now() / 1000) + ttlSeconds;
  const token = await signJwt(ctx.jwtSecret, {
    iss: 'supabase',
    ref: ctx.ref,
    role: 'authenticated',
    sub,
    aud: 'authenticated',
    exp,
  });
  return { token, exp };
}
