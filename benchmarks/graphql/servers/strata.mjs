// Child process: Strata's GraphQL endpoint at /graphql/v1 on node:http.
//   STRATA_MODE=handler (default): the HTTP layer's createGraphQLHandler (dist/graphql/http/handler.js)
//     with a pool connected as the API login role, the JWT secret and the anon key — what
//     `strata serve` and the platform route mount.
//   STRATA_MODE=engine: no HTTP layer, the engine's resolveWithPool(pool, principal, body) behind a
//     bare node:http listener with Strata's own apikey/Bearer check (auth/principal.js). Tells the
//     HTTP layer's cost apart from the engine's.
// (STRATA_MODE=serve runs `bin/strata.js serve` directly; see servers/spawn.mjs.)
// Env: DATABASE_URL (API login role), JWT_SECRET, ANON_KEY, PORT, POOL_MAX (10);
//   BENCH_ENGINE_AUTH=hmac (engine mode only): check the JWTs with the floor's node:crypto HMAC
//   (../jwt.mjs) instead of Strata's auth/principal.js (jose), to measure what JWT checking costs.
import { createServer } from 'node:http';
import { dist } from '../paths.mjs';
import { boundPort } from '../util.mjs';

const mode = process.env.STRATA_MODE ?? 'handler';
const { createPool } = await import(dist('db/pool.js'));
const pool = createPool(process.env.DATABASE_URL, {
  max: Number(process.env.POOL_MAX ?? 10),
  applicationName: 'strata-bench',
});
const jwtSecret = process.env.JWT_SECRET;
const anonKey = process.env.ANON_KEY;

let listener;
if (mode === 'handler') {
  const { createGraphQLHandler } = await import(dist('graphql/http/handler.js'));
  listener = createGraphQLHandler({ pool, jwtSecret, anonKey, graphiql: false, logging: false });
} else if (mode === 'engine') {
  const engine = await import(dist('graphql/engine.js'));
  const { principalOf } = await import(dist('auth/principal.js'));
  const { apiKeyOf, bearerOf } = await import(dist('auth/request-credentials.js'));
  const keys = { jwtSecret, anonKey, serviceRoleKey: '' };
  const hmacAuth =
    process.env.BENCH_ENGINE_AUTH === 'hmac' ? (await import('../jwt.mjs')).principalFromHeaders : undefined;
  const send = (res, status, text) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  listener = (req, res) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', async () => {
      let principal;
      try {
        principal = hmacAuth
          ? hmacAuth(jwtSecret, req.headers)
          : await principalOf(keys, apiKeyOf(req.headers), bearerOf(req.headers));
      } catch (e) {
        return send(res, 401, JSON.stringify({ message: e.message }));
      }
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const result = await engine.resolveWithPool(pool, principal, body);
        send(res, 200, typeof result === 'string' ? result : JSON.stringify(result));
      } catch (e) {
        send(res, 500, JSON.stringify({ errors: [{ message: String(e.message ?? e) }] }));
      }
    });
  };
} else {
  throw new Error(`unknown STRATA_MODE ${mode}`);
}

const server = createServer(listener);
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`READY http://127.0.0.1:${boundPort(server)}/graphql/v1 mode=${mode}`);
});
const stop = () => server.close(() => pool.end().then(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
