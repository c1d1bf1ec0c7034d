/**
 * The web console, on its own origin (its own port: console/server.ts): `GET /` is its page,
 * `/console/*` its bundled assets (dist/console/app, built from console/ by
 * scripts/build-console.mjs), `POST /console/login` trades a one-time login token for the access
 * token it stands for. Everything else the console does goes through the public Management,
 * Storage and GraphQL APIs on the API origin (same host name, the API port), cross-origin: the page
 * is told that origin in `<meta name="strata-api-origin">` and its CSP lets it connect there only.
 */
import { readFile } from 'node:fs/promises';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONSOLE_APP_DIR, consoleIsBuilt } from './assets.js';
import type { ConsoleLoginTokens } from './login-tokens.js';
import { apiOriginFor, type PlatformPorts } from './origins.js';

/**
 * Nothing from another origin but the API's (connect-src: its HTTP origin, and the same host and
 * port over WebSocket for GraphiQL's subscriptions); images may be data:/blob: (file previews),
 * fonts data: (GraphiQL's stylesheet inlines its fonts).
 */
export function consoleCsp(apiOrigin: string): string {
  const apiSocket = apiOrigin.replace(/^http/, 'ws');
  return `default-src 'self'; connect-src 'self' ${apiOrigin} ${apiSocket}; img-src 'self' data: blob:; font-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'`;
}

/** Everything that is not the page (assets, the login answer): a document of nothing. */
const ASSET_CSP = "default-src 'none'; frame-ancestors 'none'";

function secure(reply: FastifyReply, csp: string): FastifyReply {
  return reply
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
}

export async function consoleRoutes(
  app: FastifyInstance,
  opts: { logins: ConsoleLoginTokens; ports: PlatformPorts },
): Promise<void> {
  const { logins, ports } = opts;

  app.get('/', async (req, reply) => {
    const apiOrigin = apiOriginFor(ports, req.headers.host);
    if (apiOrigin === undefined)
      return secure(reply, ASSET_CSP)
        .code(400)
        .type('text/plain; charset=utf-8')
        .send('Open the console by a host name or an IP address.\n');
    secure(reply, consoleCsp(apiOrigin)).header('cache-control', 'no-cache');
    if (!consoleIsBuilt())
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The console is not built: run `npm run build`.\n');
    const html = await readFile(`${CONSOLE_APP_DIR}index.html`, 'utf8');
    return reply.type('text/html; charset=utf-8').send(html.replace('%API_ORIGIN%', apiOrigin));
  });

  app.post('/console/login', async (req, reply) => {
    const body = req.body as { token?: unknown } | undefined;
    const token = typeof body?.token === 'string' ? body.token : '';
    const accessToken = token ? logins.redeem(token) : undefined;
    secure(reply, ASSET_CSP).header('cache-control', 'no-store');
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
      res.setHeader('content-security-policy', ASSET_CSP);
      res.setHeader('x-content-type-options', 'nosniff');
      // Asset names carry their content hash (esbuild's [hash]): cacheable forever.
      res.setHeader(
        'cache-control',
        /-[A-Z0-9]{8}\.[a-z0-9]+$/.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
}
