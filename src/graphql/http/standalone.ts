/**
 * `strata serve`: the GraphQL API of one existing database, without the platform. Bootstraps the
 * API roles and the engine's objects, mints the anon/service_role keys from the JWT secret, and
 * listens on {host}:{port}/graphql/v1. serveDatabase does it; serveCommand is the CLI around it.
 */
import { createServer, type Server } from 'node:http';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { mintApiKey } from '../../auth/jwt.js';
import { checkedDatabaseUrl, portNumber, standaloneEnv } from '../../config.js';
import { firstRow } from '../../db/first-row.js';
import { createPool, withClient, withUser } from '../../db/pool.js';
import { API_LOGIN_ROLE, API_ROLES, ensureClusterRoles } from '../../db/roles.js';
import { quoteIdent } from '../../db/sql-text.js';
import { installGraphQL, type InstallReport } from '../extension/install.js';
import { createGraphQLHandler } from './handler.js';
import type { GraphQLHandlerOptions } from './options.js';

export interface ServeOptions
  extends Pick<
    GraphQLHandlerOptions,
    'maxBodyBytes' | 'maxDepth' | 'maxSelections' | 'graphiql' | 'logging'
  > {
  /** Superuser URL of the database to serve. */
  databaseUrl: string;
  jwtSecret: string;
  port?: number;
  host?: string;
  /**
   * Password of the `authenticator` login role. Given: the roles are (re)applied with it and the
   * API logs in as authenticator. Not given: existing roles are left alone and the API connects
   * with `databaseUrl`, switching role per request all the same.
   */
  authenticatorPassword?: string;
  /** Where the engine's objects go (see installGraphQL): default 'embedded' (extension on the embedded server, plain SQL elsewhere). */
  extensionDir?: string | 'embedded' | 'auto' | false;
}

export interface ServingDatabase {
  /** http://host:port */
  url: string;
  graphqlUrl: string;
  anonKey: string;
  serviceRoleKey: string;
  install: InstallReport;
  server: Server;
  pool: pg.Pool;
  close(): Promise<void>;
}

async function missingApiRoles(client: pg.ClientBase): Promise<boolean> {
  const { n } = firstRow(
    await client.query<{ n: number }>('select count(*)::int as n from pg_roles where rolname = any($1)', [
      [...API_ROLES, API_LOGIN_ROLE],
    ]),
    'count(*) of the API roles',
  );
  return n < API_ROLES.length + 1;
}

export async function serveDatabase(opts: ServeOptions): Promise<ServingDatabase> {
  const { databaseUrl, jwtSecret } = opts;
  if (!jwtSecret) throw new Error('a JWT secret is required');
  const install = await withClient(databaseUrl, async (client) => {
    const { db } = firstRow(
      await client.query<{ db: string }>('select current_database() as db'),
      'select current_database()',
    );
    if (opts.authenticatorPassword !== undefined) {
      await ensureClusterRoles(client, opts.authenticatorPassword);
    } else if (await missingApiRoles(client)) {
      // Nothing logs in as authenticator yet on this server: a random password keeps it closed.
      await ensureClusterRoles(client, (await import('node:crypto')).randomBytes(24).toString('base64url'));
    }
    await client.query(`grant connect on database ${quoteIdent(db)} to ${quoteIdent(API_LOGIN_ROLE)}`);
    return installGraphQL(client, { extensionDir: opts.extensionDir ?? 'embedded' });
  });
  const poolUrl =
    opts.authenticatorPassword !== undefined
      ? withUser(databaseUrl, API_LOGIN_ROLE, opts.authenticatorPassword)
      : databaseUrl;
  const pool = createPool(poolUrl, { max: 10, applicationName: 'strata-serve' });
  const ref = 'standalone';
  const anonKey = await mintApiKey(jwtSecret, 'anon', ref);
  const serviceRoleKey = await mintApiKey(jwtSecret, 'service_role', ref);
  const handler = createGraphQLHandler({
    pool,
    jwtSecret,
    anonKey,
    serviceRoleKey,
    maxBodyBytes: opts.maxBodyBytes,
    maxDepth: opts.maxDepth,
    maxSelections: opts.maxSelections,
    graphiql: opts.graphiql,
    logging: opts.logging,
  });
  const server = createServer(handler);
  const host = opts.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 54321, host, () => resolve());
    });
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? 54321);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closed = false;
  return {
    url,
    graphqlUrl: url + handler.endpoint,
    anonKey,
    serviceRoleKey,
    install,
    server,
    pool,
    async close() {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end().catch(() => {});
    },
  };
}

function positiveInt(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${flag} must be a whole number (got "${v}")`);
  return n;
}

export async function serveCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      'database-url': { type: 'string' },
      'jwt-secret': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'authenticator-password': { type: 'string' },
      'extension-dir': { type: 'string' },
      'max-body-bytes': { type: 'string' },
      'max-depth': { type: 'string' },
      'max-selections': { type: 'string' },
    },
  });
  const env = standaloneEnv();
  const databaseUrl = values['database-url'] ?? env.databaseUrl;
  const jwtSecret = values['jwt-secret'] ?? env.jwtSecret;
  if (!databaseUrl) throw new Error('strata serve: --database-url (or DATABASE_URL) is required');
  checkedDatabaseUrl(databaseUrl, 'strata serve: --database-url (or DATABASE_URL)');
  if (!jwtSecret) throw new Error('strata serve: --jwt-secret (or STRATA_JWT_SECRET) is required');
  const extDir = values['extension-dir'];
  const maxDepth = positiveInt('max-depth', values['max-depth']);
  const maxSelections = positiveInt('max-selections', values['max-selections']);
  const running = await serveDatabase({
    databaseUrl,
    jwtSecret,
    port:
      values.port !== undefined
        ? portNumber(values.port, '--port')
        : env.port !== undefined && env.port !== ''
          ? portNumber(env.port, 'STRATA_PORT')
          : undefined,
    host: values.host ?? env.host,
    authenticatorPassword: values['authenticator-password'] ?? env.authenticatorPassword,
    extensionDir: extDir === undefined ? 'embedded' : extDir === 'none' ? false : extDir,
    maxBodyBytes: positiveInt('max-body-bytes', values['max-body-bytes']),
    maxDepth: maxDepth === 0 ? false : maxDepth,
    maxSelections: maxSelections === 0 ? false : maxSelections,
  });
  if (running.install.warning) console.warn(`warning: ${running.install.warning}`);
  const how =
    running.install.mode === 'extension'
      ? `extension ${running.install.name} ${running.install.version}`
      : `SQL objects, version ${running.install.version}`;
  console.log(`Strata GraphQL is serving one database.

     GraphQL URL: ${running.graphqlUrl}
        anon key: ${running.anonKey}
service_role key: ${running.serviceRoleKey}
          Engine: ${how}

Send the key in the "apikey" header. Press Ctrl-C to stop.`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await running.close();
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop());
}
