// Child process: PostGraphile 5 (Amber preset) over node:http, the comparison engine.
// Env: DATABASE_URL (the API login role), JWT_SECRET, PORT (0 = any), POOL_MAX (10), SCHEMAS (public).
// Every request runs with pgSettings { role, request.jwt.claims } from the verified apikey/Bearer
// JWT — the same role and claim setting Strata uses, so the same RLS policies filter the same
// rows. MODE=schema-build: build the schema for SCHEMAS, print `SCHEMA_BUILD_MS <ms>` and exit.
import { createServer } from 'node:http';
import { principalFromHeaders } from '../jwt.mjs';
import { boundPort } from '../util.mjs';

// PostGraphile 5 / Grafast 1 call Promise.withResolvers (Node 22+); Node 20 needs this polyfill.
if (typeof Promise.withResolvers !== 'function') {
  /** @type {any} */ (Promise).withResolvers = function withResolvers() {
    let resolve, reject;
    const promise = new this((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

const t0 = performance.now();
const url = process.env.DATABASE_URL;
const secret = process.env.JWT_SECRET;
const schemas = (process.env.SCHEMAS ?? 'public').split(',');
const { postgraphile, PostGraphileAmberPreset, makePgService, grafserv } = await import(
  '../comparators/engines.mjs'
);

const pgl = postgraphile({
  extends: [PostGraphileAmberPreset],
  pgServices: [
    makePgService({
      connectionString: url,
      schemas,
      poolConfig: { max: Number(process.env.POOL_MAX ?? 10) },
    }),
  ],
  grafserv: { graphqlPath: '/graphql/v1', graphiql: false, watch: false },
  grafast: {
    context(requestContext) {
      const headers = requestContext.node?.req?.headers ?? {};
      const { role, claims } = principalFromHeaders(secret, headers);
      return { pgSettings: { role, 'request.jwt.claims': JSON.stringify(claims) } };
    },
  },
});

const tSchema = performance.now();
await pgl.getSchema();
const buildMs = performance.now() - tSchema;
if (process.env.MODE === 'schema-build') {
  console.log(`SCHEMA_BUILD_MS ${buildMs.toFixed(1)}`);
  await pgl.release();
  process.exit(0);
}
const server = createServer();
await pgl.createServ(grafserv).addTo(server);
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(
    `READY http://127.0.0.1:${boundPort(server)}/graphql/v1 schema_ms=${buildMs.toFixed(0)} boot_ms=${(performance.now() - t0).toFixed(0)}`,
  );
});
const stop = () =>
  server.close(async () => {
    await pgl.release();
    process.exit(0);
  });
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
