/**
 * The web console: `GET /` is its page, `/console/*` its bundled assets (dist/console/app, built
 * from console/ by scripts/build-console.mjs), `POST /console/login` trades a one-time login token
 * for the access token it stands for. Everything else the console does goes through the public
 * Management, Storage and GraphQL APIs.
 */
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONSOLE_APP_DIR, consoleIsBuilt } from './assets.js';
import type { ConsoleLoginTokens } from './login-tokens.js';

/** Nothing from another origin; images may be data:/blob: (file previews), fonts data: (GraphiQL's stylesheet inlines its fonts). */
export const CONSOLE_CSP =
  "default-src 'self'; img-src 'self' data: blob:; font-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
}

export async function consoleRoutes(
  app: FastifyInstance,
  opts: { logins: ConsoleLoginTokens },
): Promise<void> {
  const { logins } = opts;

  app.get('/', async (_req, reply) => {
    secure(reply).header('cache-control', 'no-cache');
    if (!consoleIsBuilt())
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The console is not built: run `npm run build`.\n');
    return reply.sendFile('index.html', CONSOLE_APP_DIR);
  });

  app.post('/console/login', async (req, reply) => {
    const body = req.body as { token?: unknown } | undefined;
    const token = typeof body?.token === 'string' ? body.token : '';
    const accessToken = token ? logins.redeem(token) : undefined;
    secure(reply).header('cache-control', 'no-store');
    if (!accessToken)
      return reply.code(401).send({
        message: 'This login link was already used or has expired: sign in with an access token',
      });
    return { access_token: accessToken };
  });

  await app.register(fastifyStatic, {
    root: CONSOLE_APP_DIR,
    prefix: '/console/',
    index: false,
    wildcard: true,
    cacheControl: false,
    setHeaders(res, path) {
      res.setHeader('content-security-policy', CONSOLE_CSP);
      res.setHeader('x-content-type-options', 'nosniff');
      // Asset names carry their content hash (esbuild's [hash]): cacheable forever.
      res.setHeader(
        'cache-control',
        /-[A-Z0-9]{8}\.[a-z0-9]+$/.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
}
